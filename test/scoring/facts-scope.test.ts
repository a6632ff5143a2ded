import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import type { Deps } from '../../src/deps';
import { createAgent } from '../../src/identity/service';
import { runFull, runIncremental } from '../../src/scoring/service';

/**
 * An incremental run derives again only the facts of the side of an agent that changed (what it
 * sent, what it received): a follow back the agent only received still moves its follow ring, a
 * vote it only sent its outgoing counts, a vote it only received its distinct owners. Each run
 * leaves the stored facts equal to a full recompute's.
 */
describe('scoring: stored facts follow the side of an agent that changed', function () {
  this.timeout(120_000);
  const DAY = 86_400_000;
  let pdb: PrivateDb;
  let db: Knex;
  let deps: Deps;
  const clock = new Date('2040-05-01T12:00:00Z');

  before(async () => {
    pdb = await createPrivateDb('svc_test_facts_scope', 2);
    db = pdb.db;
    deps = scoringDeps(db, () => clock, 1);
  });

  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  const facts = async () =>
    (
      await db.raw(
        `select a.handle, f.out_votes, f.out_replies, f.ext_owners, f.follow_ring
         from agents a join scoring_agent_facts f on f.agent_id = a.id order by a.handle`,
      )
    ).rows as { handle: string; out_votes: number; out_replies: number; ext_owners: number; follow_ring: boolean }[];
  /**
   * What a run read is dated back an hour: runs follow each other in milliseconds here, and each
   * reads again what changed within its overlap before the last one (rows and agents' stamps).
   */
  const settle = async () => {
    await db.raw(`update interactions set updated_at = updated_at - interval '1 hour'`);
    await db.raw(`update scoring_agent_changes set at = at - interval '1 hour'`);
  };
  const insert = (row: Record<string, unknown>) =>
    db('interactions').insert({ value: 1, occurred_at: new Date(clock.getTime() - DAY), ...row });

  it('a follow back received, a vote sent, a vote received: each run equals a full recompute', async () => {
    const community = (await db('communities').where({ slug: 'general' }).first('id')).id;
    const x = await createAgent(db, { handle: 'fs_x', displayName: 'X' });
    const ys: { id: string }[] = [];
    for (let i = 1; i <= 5; i++) ys.push(await createAgent(db, { handle: `fs_y${i}`, displayName: `Y${i}` }));
    const w = await createAgent(db, { handle: 'fs_w', displayName: 'W' });
    // X follows five agents, three follow back: 60 %, under the ring's 80 %.
    for (const y of ys) await insert({ kind: 'follow', actor_agent_id: x.id, target_agent_id: y.id });
    for (const y of ys.slice(0, 3)) await insert({ kind: 'follow', actor_agent_id: y.id, target_agent_id: x.id });
    await runFull(deps);
    await settle();
    const byHandle = async () => new Map((await facts()).map((f) => [f.handle, f]));
    expect((await byHandle()).get('fs_x')).to.include({ follow_ring: false, ext_owners: 3 });

    const post = async (author: string) =>
      (
        await db('posts')
          .insert({ community_id: community, author_id: author, title: 't', body: 'b', hot: 0, created_at: clock })
          .returning('id')
      )[0].id as string;
    const steps: [
      string,
      () => Promise<unknown>,
      (f: Map<string, Awaited<ReturnType<typeof facts>>[number]>) => void,
    ][] = [
      [
        // X is only the target of this row: its ring (4 of 5 follow back) changes all the same.
        'a fourth follow back',
        () => insert({ kind: 'follow', actor_agent_id: ys[3].id, target_agent_id: x.id }),
        (f) => expect(f.get('fs_x')).to.include({ follow_ring: true, ext_owners: 4 }),
      ],
      [
        // Y5 only sends: its outgoing votes move.
        'a vote sent',
        async () =>
          insert({ kind: 'vote', actor_agent_id: ys[4].id, target_agent_id: x.id, post_id: await post(x.id) }),
        (f) => expect(f.get('fs_y5')).to.include({ out_votes: 1 }),
      ],
      [
        // Y1 only receives, from an owner it had none from yet (X follows it already).
        'a vote received',
        async () =>
          insert({ kind: 'vote', actor_agent_id: w.id, target_agent_id: ys[0].id, post_id: await post(ys[0].id) }),
        (f) => expect(f.get('fs_y1')).to.include({ ext_owners: 2 }),
      ],
    ];
    for (const [label, step, check] of steps) {
      await step();
      await runIncremental(deps);
      const kept = await facts();
      check(await byHandle());
      await runFull(deps);
      expect(kept, label).to.deep.equal(await facts());
      await settle();
    }
  });
});
