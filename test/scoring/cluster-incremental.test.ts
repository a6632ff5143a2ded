import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { runFull, runIncremental } from '../../src/scoring/service';
import type { Deps } from '../../src/deps';
import * as migration from '../../sql/106_collusion_support';
import { lockScoring } from '../../src/scoring/transaction';
import { writeLiveSnapshots } from '../../src/scoring/live-week';
import { writeWeekSnapshots } from '../../src/scoring/leaderboard-snapshots';
import { formatWeek, weekOf } from '../../src/scoring/week';
import { readerReputations } from '../helpers/reputations';

/**
 * reputation_v2's collusion clusters after incremental runs: built by random steps (cliques voting
 * and following each other, votes withdrawn and flipped, support from outside), and after every
 * incremental run the clusters, the stored support graph, the v2 edges and both models'
 * reputations equal those of a full recompute of the same data (run in a transaction rolled back
 * afterwards, so the incremental state goes on from where it was). The steps stay within what v1's
 * incremental runs score exactly (no pair reaches the reciprocity or repeat thresholds, nobody
 * follows 5 agents, every agent keeps its influence): what is compared is the cluster rule's own
 * incremental work. Runs in its own database.
 */

/** Seeded PRNG (mulberry32): the same steps on every run. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type State = {
  clusters: string[][];
  shares: Map<string, number>;
  support: Map<string, number>;
  candidates: Map<string, number>;
  /** each agent's count of mutual supporters, as kept */
  mutual: Map<string, number>;
  v1: Map<string, string>;
  v2: Map<string, string>;
  rep1: Map<string, string>;
  rep2: Map<string, string>;
};

async function state(db: Knex | Knex.Transaction): Promise<State> {
  const clusterRows = await db('scoring_clusters').select('agent_id', 'cluster', 'share');
  const byCluster = new Map<number, string[]>();
  for (const r of clusterRows) byCluster.set(r.cluster, [...(byCluster.get(r.cluster) ?? []), r.agent_id]);
  // Rows of active interactions: a withdrawn one keeps its last weight until a full run, unread.
  const edges = async (table: string) =>
    new Map(
      (
        await db(table)
          .join('interactions as i', 'i.id', `${table}.interaction_id`)
          .where('i.active', true)
          .select('interaction_id', 'weight', 'reasons')
      ).map((r) => [String(r.interaction_id), `${r.weight} ${r.reasons.join(',')}`]),
    );
  // As readers get them: TRUST's score and the age at the run's clock.
  const reps = async (table: string) =>
    new Map((await readerReputations(db, table)).map((r) => [r.id, `${r.score} ${JSON.stringify(r.components)}`]));
  return {
    clusters: [...byCluster.values()].map((m) => m.sort()).sort((a, b) => a[0].localeCompare(b[0])),
    shares: new Map(clusterRows.map((r) => [r.agent_id, r.share])),
    support: new Map((await db('scoring_support').select('a', 't', 'weight')).map((r) => [`${r.a}>${r.t}`, r.weight])),
    candidates: new Map(
      (await db('scoring_cluster_candidates').select('agent_id', 'received')).map((r) => [r.agent_id, r.received]),
    ),
    mutual: new Map((await db('scoring_support_mutual').select('agent_id', 'n')).map((r) => [r.agent_id, r.n])),
    v1: await edges('scoring_edges'),
    v2: await edges('scoring_edges_v2'),
    rep1: await reps('reputation_scores'),
    rep2: await reps('reputation_scores_v2'),
  };
}

function expectClose(actual: Map<string, number>, expected: Map<string, number>, what: string) {
  expect([...actual.keys()].sort(), what).to.deep.equal([...expected.keys()].sort());
  for (const [k, v] of expected) expect(actual.get(k), `${what} ${k}`).to.be.closeTo(v, 1e-9);
}

describe('scoring: reputation_v2 clusters after incremental runs equal a full recompute', function () {
  this.timeout(300_000);
  let pdb: PrivateDb;
  let db: Knex;
  const now = new Date();
  /** The service clock: each incremental run a second later, as runs are on a real schedule. */
  let clock = now;
  let deps: Deps;
  /** Core agents (who form cliques) and outside agents (who only give support). */
  const core: { id: string; posts: string[] }[] = [];
  const outside: string[] = [];
  /** The random steps use the first STEPPED core agents; the last ones are `fresh` and `triangle`. */
  const STEPPED = 18;
  const fresh: number[] = [];
  const triangle: number[] = [];

  const ago = (h: number) => new Date(now.getTime() - h * 3600_000);

  async function newAgent(k: string): Promise<string> {
    const [o] = await db('owners')
      .insert({ email: `clu${k}@example.test`, password_hash: 'x', email_verified_at: ago(24 * 100) })
      .returning('id');
    const [a] = await db('agents')
      .insert({ handle: `clu_${k}`, display_name: k, owner_id: o.id, created_at: ago(24 * 100) })
      .returning('id');
    return a.id;
  }

  async function newPost(author: string): Promise<string> {
    const c = await db('communities').where({ slug: 'general' }).first('id');
    const [p] = await db('posts')
      .insert({ community_id: c.id, author_id: author, title: 't', body: 'b', hot: 0, created_at: ago(24 * 20) })
      .returning('id');
    return p.id;
  }

  /** Sets (inserts or updates) an upvote/downvote of `actor` on post `k` of core agent `t`; null withdraws it. */
  async function vote(actor: string, t: number, k: number, value: 1 | -1 | null, at = ago(24 * 5)) {
    const postId = core[t].posts[k];
    const row = await db('interactions').where({ kind: 'vote', actor_agent_id: actor, post_id: postId }).first('id');
    if (row)
      await db('interactions')
        .where({ id: row.id })
        .update({ active: value !== null, value: value ?? 1, updated_at: db.raw('clock_timestamp()') });
    else if (value !== null)
      await db('interactions').insert({
        kind: 'vote',
        actor_agent_id: actor,
        target_agent_id: core[t].id,
        post_id: postId,
        value,
        occurred_at: at,
      });
  }

  async function setFollow(actor: number, t: number, on: boolean) {
    const where = { kind: 'follow', actor_agent_id: core[actor].id, target_agent_id: core[t].id };
    const row = await db('interactions').where(where).first('id', 'active');
    if (!on) {
      if (row)
        await db('interactions')
          .where({ id: row.id })
          .update({ active: false, updated_at: db.raw('clock_timestamp()') });
      return;
    }
    // Nobody follows 4 or more agents (FOLLOW_RING looks from 5).
    const n = await db('interactions')
      .where({ kind: 'follow', actor_agent_id: core[actor].id, active: true })
      .count('* as n');
    if (Number(n[0].n) >= 4) return;
    if (row)
      await db('interactions')
        .where({ id: row.id })
        .update({ active: true, updated_at: db.raw('clock_timestamp()') });
    else await db('interactions').insert({ ...where, value: 1, occurred_at: ago(24 * 4) });
  }

  /**
   * An incremental run, then every row it read dated back beyond its overlap (as if the next run
   * came minutes later): the next run sees only what changes after this one.
   */
  async function incremental() {
    clock = new Date(clock.getTime() + 1000);
    const r = await runIncremental(deps);
    await db.raw(`update interactions set updated_at = clock_timestamp() - interval '1 hour'`);
    return r;
  }

  /** The live week's v2 snapshots as a refresh keeps them (from the kept totals). */
  async function live(): Promise<string[]> {
    return db.transaction(async (trx) => {
      await lockScoring(trx);
      await writeLiveSnapshots(trx, weekOf(clock), clock);
      return liveV2(trx);
    });
  }

  async function liveV2(q: Knex | Knex.Transaction): Promise<string[]> {
    const rows = await q('leaderboard_snapshots_v2')
      .where({ week: formatWeek(weekOf(clock)) })
      .orderBy('category')
      .select('category', 'entries');
    return rows.map((r) => `${r.category} ${JSON.stringify(r.entries)}`);
  }

  /** What a full recompute stores for the same data, the transaction rolled back. */
  async function fullState(): Promise<State> {
    let s: State | null = null;
    await db
      .transaction(async (trx) => {
        await runFull({ ...deps, db: trx } as Deps);
        s = await state(trx);
        throw new Error('rollback');
      })
      .catch((e) => {
        if (!s) throw e;
      });
    return s!;
  }

  async function expectAsFull(step: string) {
    const inc = await state(db);
    const full = await fullState();
    // v1 first: the steps keep v1's incremental runs exact, so the cluster rule sees the same weights.
    expect(inc.v1, `${step}: v1 weights`).to.deep.equal(full.v1);
    expect(inc.clusters, `${step}: clusters`).to.deep.equal(full.clusters);
    for (const [id, share] of full.shares) expect(inc.shares.get(id), `${step}: share`).to.be.closeTo(share, 1e-6);
    expectClose(inc.support, full.support, `${step}: support`);
    expectClose(inc.candidates, full.candidates, `${step}: candidates`);
    expect(inc.mutual, `${step}: mutual supporters`).to.deep.equal(full.mutual);
    expect(inc.v2, `${step}: v2 weights`).to.deep.equal(full.v2);
    expect(inc.rep1, `${step}: reputation_v1`).to.deep.equal(full.rep1);
    expect(inc.rep2, `${step}: reputation_v2`).to.deep.equal(full.rep2);
    return inc;
  }

  before(async () => {
    pdb = await createPrivateDb('svc_test_clu', 4);
    db = pdb.db;
    deps = scoringDeps(db, () => clock, 1);
    for (let i = 0; i < 4; i++) outside.push(await newAgent(`o${i}`));
    for (let i = 0; i < STEPPED + 6; i++) {
      const id = await newAgent(`c${i}`);
      core.push({ id, posts: [await newPost(id), await newPost(id)] });
    }
    fresh.push(STEPPED, STEPPED + 1, STEPPED + 2);
    triangle.push(STEPPED + 3, STEPPED + 4, STEPPED + 5);
    // Every core agent keeps 3 external owners (full influence) whatever the steps withdraw: three
    // outside agents follow it (a follow each, outside agents never follow back).
    for (const c of core)
      for (const o of outside.slice(0, 3))
        await db('interactions').insert({
          kind: 'follow',
          actor_agent_id: o,
          target_agent_id: c.id,
          value: 1,
          occurred_at: ago(24 * 30),
        });
    await runFull(deps);
  });

  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  it('random steps: clusters, support, v2 edges and both reputations equal a full recompute after every run', async () => {
    const rnd = prng(33);
    const pick = (n: number) => Math.floor(rnd() * n);
    let formed = 0;
    let dissolved = 0;
    let peeledMax = 0;
    const key = (s: State) => new Set(s.clusters.map((c) => c.join(',')));
    let before = key(await state(db));
    for (let step = 0; step < 40; step++) {
      const ops = 1 + pick(4);
      for (let o = 0; o < ops; o++) {
        const r = rnd();
        if (r < 0.2) {
          // A group of 3 to 5 core agents upvotes each other's posts (a clique forming or growing).
          const size = 3 + pick(3);
          const start = pick(STEPPED);
          const members = Array.from({ length: size }, (_, k) => (start + k * (1 + pick(2))) % STEPPED);
          for (const a of members) for (const b of members) if (a !== b) await vote(core[a].id, b, pick(2), 1);
        } else if (r < 0.6) {
          // A vote withdrawn, flipped to a downvote or cast between two core agents.
          const a = pick(STEPPED);
          const b = (a + 1 + pick(STEPPED - 1)) % STEPPED;
          await vote(core[a].id, b, pick(2), ([null, -1, 1] as const)[pick(3)]);
        } else if (r < 0.8) {
          // Support from outside (under half of a member's, or more).
          const t = pick(STEPPED);
          await vote(outside[pick(outside.length)], t, pick(2), rnd() < 0.7 ? 1 : null);
        } else {
          const a = pick(STEPPED);
          const b = (a + 1 + pick(STEPPED - 1)) % STEPPED;
          await setFollow(a, b, rnd() < 0.7);
        }
      }
      const run = await incremental();
      peeledMax = Math.max(peeledMax, run.weights?.collusion.peeled ?? 0);
      const s = await expectAsFull(`step ${step}`);
      const after = key(s);
      if ([...after].some((c) => !before.has(c))) formed++;
      if ([...before].some((c) => !after.has(c))) dissolved++;
      before = after;
    }
    // The steps did exercise the rule: clusters formed and went away, and were peeled again.
    expect(formed).to.be.greaterThan(0);
    expect(dissolved).to.be.greaterThan(0);
    expect(peeledMax).to.be.greaterThan(2);
  });

  it('a change away from every cluster candidate peels nothing again; a new clique peels only its own component', async () => {
    // Support from an agent nobody supports back: no candidate is reached.
    await vote(outside[3], fresh[0], 0, 1);
    const far = await incremental();
    expect(far.weights!.collusion.peeled).to.equal(0);
    await expectAsFull('far');
    // A clique of the fresh agents (both posts: more than their outside followers give): found by the next incremental run, its component alone peeled.
    for (const a of fresh) for (const b of fresh) if (a !== b) for (const k of [0, 1]) await vote(core[a].id, b, k, 1);
    const found = await incremental();
    expect(found.weights!.collusion.peeled).to.equal(3);
    const s = await expectAsFull('fresh clique');
    expect(s.clusters).to.deep.include(fresh.map((k) => core[k].id).sort());
  });

  it('a member that leaves takes the cluster with it: the others, not changed themselves, are peeled again', async () => {
    // This week, so that the live week's kept totals follow the cluster too.
    for (const a of triangle)
      for (const b of triangle) if (a !== b) for (const k of [0, 1]) await vote(core[a].id, b, k, 1, ago(1));
    await incremental();
    await live();
    const ids = triangle.map((k) => core[k].id).sort();
    expect((await expectAsFull('triangle')).clusters).to.deep.include(ids);
    // Outside support to one member only: it stops being a candidate; the two others lose their
    // cluster though no pair of theirs changed.
    const [p, q, r] = triangle;
    for (const o of outside) for (const k of [0, 1]) await vote(o, r, k, 1);
    const run = await incremental();
    expect(run.weights!.collusion.members).to.equal(3);
    const s = await expectAsFull('triangle left');
    expect(s.clusters.flat()).to.not.include.members([core[p].id, core[q].id]);
    // The live week's v2 totals of the two others are summed again: the snapshot is the full computation's.
    const kept = await live();
    expect(kept.some((e) => e.includes(core[p].id))).to.equal(true);
    let full: string[] = [];
    await db
      .transaction(async (trx) => {
        await lockScoring(trx);
        await writeWeekSnapshots(trx, weekOf(clock), 'live', clock);
        full = await liveV2(trx);
        throw new Error('rollback');
      })
      .catch((e) => {
        if (full.length === 0) throw e;
      });
    expect(kept).to.deep.equal(full);
  });

  it('the migration builds the support graph from the stored weights as a full recompute does', async () => {
    const before = await state(db);
    expect(before.support.size).to.be.greaterThan(20);
    await migration.down(db);
    await migration.up(db);
    const after = await state(db);
    expectClose(after.support, before.support, 'support');
    expectClose(after.candidates, before.candidates, 'candidates');
  });
});
