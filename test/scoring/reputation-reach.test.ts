import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { runFull, runIncremental } from '../../src/scoring/service';
import type { Deps } from '../../src/deps';

/**
 * Which reputations an incremental run sums again: those whose inputs moved. A reputation reads
 * the votes, replies and follows an agent received and the replies it wrote (reactions count in
 * none), so a reaction leaves its target's stored reputation as it was, and a vote does not.
 * Every stored reputation still equals a full recompute's. Runs in its own database.
 */
describe('scoring: an incremental run sums again only the reputations whose inputs moved', function () {
  this.timeout(120_000);
  let pdb: PrivateDb;
  let db: Knex;
  const now = new Date();
  let clock = now;
  let deps: Deps;
  const ago = (days: number) => new Date(now.getTime() - days * 86_400_000);
  let author: string;
  let fan: string;
  let post: string;

  async function newAgent(k: string): Promise<string> {
    const [o] = await db('owners')
      .insert({ email: `reach${k}@example.test`, password_hash: 'x', email_verified_at: ago(100) })
      .returning('id');
    const [a] = await db('agents')
      .insert({ handle: `reach_${k}`, display_name: k, owner_id: o.id, created_at: ago(100) })
      .returning('id');
    return a.id;
  }

  async function incremental() {
    clock = new Date(clock.getTime() + 1000);
    const r = await runIncremental(deps);
    // Every row and agent stamp it read dated back beyond its overlap, as if the next run came minutes later.
    await db.raw(`update interactions set updated_at = clock_timestamp() - interval '1 hour'`);
    await db.raw(`update scoring_agent_changes set at = clock_timestamp() - interval '1 hour'`);
    return r;
  }

  const stored = async () =>
    new Map(
      (await db('reputation_scores').select('agent_id', 'score', 'components', 'computed_at')).map((r) => [
        r.agent_id,
        { shown: `${r.score} ${JSON.stringify(r.components)}`, at: new Date(r.computed_at).getTime() },
      ]),
    );

  /** What a full recompute stores for the same data, the transaction rolled back. */
  async function fullShown(): Promise<Map<string, string>> {
    let shown: Map<string, string> | null = null;
    await db
      .transaction(async (trx) => {
        await runFull({ ...deps, db: trx } as Deps);
        shown = new Map(
          (await trx('reputation_scores').select('agent_id', 'score', 'components')).map((r) => [
            r.agent_id,
            `${r.score} ${JSON.stringify(r.components)}`,
          ]),
        );
        throw new Error('rollback');
      })
      .catch((e) => {
        if (!shown) throw e;
      });
    return shown!;
  }

  async function expectAsFull() {
    const inc = new Map([...(await stored())].map(([id, r]) => [id, r.shown]));
    expect(inc).to.deep.equal(await fullShown());
  }

  before(async () => {
    pdb = await createPrivateDb('svc_test_reach', 2);
    db = pdb.db;
    deps = scoringDeps(db, () => clock, 1);
    author = await newAgent('author');
    fan = await newAgent('fan');
    const c = await db('communities').where({ slug: 'general' }).first('id');
    [{ id: post }] = await db('posts')
      .insert({ community_id: c.id, author_id: author, title: 't', body: 'b', hot: 0, created_at: ago(5) })
      .returning('id');
    await db('interactions').insert({
      kind: 'follow',
      actor_agent_id: fan,
      target_agent_id: author,
      value: 1,
      occurred_at: ago(3),
    });
    await runFull(deps);
    // The rows written just before the full run are read again once (the watermark's overlap).
    await incremental();
  });

  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  it('a reaction leaves its target’s stored reputation as it was; a vote sums it again', async () => {
    const before = (await stored()).get(author)!;
    await db('interactions').insert({
      kind: 'reaction',
      actor_agent_id: fan,
      target_agent_id: author,
      post_id: post,
      reaction_type: 'fire',
      value: 1,
      occurred_at: ago(1),
    });
    const reacted = await incremental();
    expect(reacted.changed).to.equal(1);
    expect(reacted.reach.summed).to.equal(0);
    expect((await stored()).get(author)).to.deep.equal(before);
    await expectAsFull();

    await db('interactions').insert({
      kind: 'vote',
      actor_agent_id: fan,
      target_agent_id: author,
      post_id: post,
      value: 1,
      occurred_at: ago(1),
    });
    const voted = await incremental();
    expect(voted.reach.summed).to.equal(1);
    const after = (await stored()).get(author)!;
    expect(after.at).to.equal(clock.getTime());
    expect(after.shown).to.not.equal(before.shown);
    await expectAsFull();
  });
});
