import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { runFull, runIncremental } from '../../src/scoring/service';
import { computeReputation } from '../../src/scoring/reputation';
import { idleInputs } from '../helpers/reputations';
import { getReputation, getReputationBody } from '../../src/reputation/service';
import { DAY_MS, MODELS } from '../../src/scoring/policy';
import type { Deps } from '../../src/deps';

/**
 * Reputations the clock alone moves are composed at the latest run's clock by readers
 * (src/reputation/service.ts atRunClock) instead of rewritten by every run: what a reader gets
 * after a run is what a full recompute at that run's clock stores, computedAt is that clock, a
 * milestone reached by age alone is notified once, and cached bodies of an older clock are not
 * served.
 */

const MINUTE = 60_000;
/** An agent without interactions: TRUST alone, 50 (good standing) + 60·min(1, ageDays/90). */
const idle = idleInputs;

describe('scoring: reputations shown at the latest run clock', function () {
  this.timeout(120_000);
  let pdb: PrivateDb;
  let db: Knex;
  let deps: Deps;
  const clock = { now: new Date('2044-03-04T05:06:07.089Z') };

  before(async () => {
    pdb = await createPrivateDb('svc_test_atclock', 2);
    db = pdb.db;
    deps = scoringDeps(db, () => clock.now, 1);
  });
  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  const agent = async (handle: string, ageDays: number, owned = false) => {
    const owner = owned
      ? (
          await db('owners')
            .insert({ email: `${handle}@x.test`, password_hash: 'x' })
            .returning('id')
        )[0].id
      : null;
    const [row] = await db('agents')
      .insert({
        handle,
        display_name: 'a',
        owner_id: owner,
        created_at: new Date(clock.now.getTime() - ageDays * DAY_MS),
      })
      .returning(['id', 'created_at']);
    return { id: row.id as string, created: row.created_at as Date };
  };
  /**
   * A run takes again what changed within the watermark's overlap (120 s of the database clock):
   * the agents stamped at their creation move back past it, as between real runs.
   */
  const settle = () => db.raw(`update scoring_agent_changes set at = at - interval '1 hour'`);
  const version = async (id: string) =>
    (await db.raw(`select xmin::text v from reputation_scores where agent_id = ?`, [id])).rows[0].v as string;
  const read = (handle: string, model: (typeof MODELS)[number]) =>
    getReputation(db, deps.query, deps.caches.achievements, handle, clock.now, false, model);

  it("a young agent's TRUST and an old agent's whole-day age move at each run's clock without a row written", async () => {
    const young = await agent('atclock_young', 10.3);
    const old = await agent('atclock_old', 200.98);
    await runFull(deps);
    await settle();
    const stored = { young: await version(young.id), old: await version(old.id) };
    const before = await read('atclock_young', 'reputation_v1');
    for (let k = 0; k < 2; k++) {
      clock.now = new Date(clock.now.getTime() + 30 * MINUTE);
      const r = await runIncremental(deps);
      expect(r.full).to.equal(false);
      for (const [a, handle] of [
        [young, 'atclock_young'],
        [old, 'atclock_old'],
      ] as const) {
        const want = computeReputation(idle((clock.now.getTime() - a.created.getTime()) / DAY_MS));
        for (const model of MODELS) {
          const got = await read(handle, model);
          expect(got.score, `${handle} ${model}`).to.equal(want.score);
          expect(got.components, `${handle} ${model}`).to.deep.equal({
            ...want.components,
            version: model === 'reputation_v1' ? 1 : 2,
          });
          expect(got.computedAt, `${handle} ${model}`).to.equal(clock.now.toISOString());
        }
      }
    }
    // TRUST moved by 60 · (1 h / 90 days) = 0.028, the old agent turned 201 days: neither row was written.
    const after = await read('atclock_young', 'reputation_v1');
    const trustOf = (x: typeof before) => (x.components as { trust: { score: number } }).trust.score;
    expect(trustOf(after)).to.be.greaterThan(trustOf(before));
    const ages = (await read('atclock_old', 'reputation_v1')).components as { trust: { agentAgeDays: number } };
    expect(ages.trust.agentAgeDays).to.equal(201);
    expect({ young: await version(young.id), old: await version(old.id) }).to.deep.equal(stored);
  });

  it('a milestone reached by age alone is notified once, by the run whose clock reaches it', async () => {
    // 50 + 60 · ageDays/90 reaches 99.5 at 74.25 days: 72 minutes after the first run's clock.
    const a = await agent('atclock_milestone', 74.2, true);
    await runIncremental(deps);
    await settle();
    expect((await read('atclock_milestone', 'reputation_v1')).score).to.equal(99);
    let writes = 0;
    let reachedAt: Date | null = null;
    for (let k = 0; k < 6; k++) {
      const v = await version(a.id);
      clock.now = new Date(clock.now.getTime() + 30 * MINUTE);
      await runIncremental(deps);
      if ((await version(a.id)) !== v) writes++;
      const score = (await read('atclock_milestone', 'reputation_v1')).score;
      expect(score, clock.now.toISOString()).to.equal(
        computeReputation(idle((clock.now.getTime() - a.created.getTime()) / DAY_MS)).score,
      );
      if (score === 100 && !reachedAt) reachedAt = clock.now;
    }
    expect(reachedAt).to.not.equal(null);
    const notes = await db('notifications').where({ type: 'reputation_milestone', agent_id: a.id });
    expect(notes.map((n) => [n.scope_key, n.data.score, new Date(n.created_at).getTime()])).to.deep.equal([
      ['100', 100, reachedAt!.getTime()],
    ]);
    // Its row was written when its total moved (99 → 100), not at each of the 6 runs.
    expect(writes).to.equal(1);
  });

  it('a cached reputation body is not served once a run moved the clock', async () => {
    await agent('atclock_cached', 20.1);
    clock.now = new Date(clock.now.getTime() + MINUTE);
    await runIncremental(deps);
    const body = async () =>
      JSON.parse(
        (await getReputationBody(db, deps.query, deps.caches, 'atclock_cached', clock.now, false)).body.toString(),
      ).data;
    const first = await body();
    expect(first.computedAt).to.equal(clock.now.toISOString());
    // Served from memory while no run moved the clock: a row changed under it is not read.
    await db.raw(
      `update reputation_scores set score = score + 1 where agent_id = (select id from agents where handle = ?)`,
      ['atclock_cached'],
    );
    expect(await body()).to.deep.equal(first);
    clock.now = new Date(clock.now.getTime() + 30 * MINUTE);
    await runIncremental(deps);
    const second = await body();
    expect(second.computedAt).to.equal(clock.now.toISOString());
    expect(second.components.trust.score).to.be.greaterThan(first.components.trust.score);
  });
});
