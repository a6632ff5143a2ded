import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import type { Deps } from '../../src/deps';
import { createAgent } from '../../src/identity/service';
import { runFull, runIncremental } from '../../src/scoring/service';

/**
 * The window's repeated pairs (scoring_pair_counts) as runs keep them while the window moves
 * forward, stands still, and moves back: each time, every (actor, target, kind) of votes and
 * replies with two or more window rows, and only those, marked exact at the run's clock.
 */
describe('scoring: the window repeated pairs are kept exact as the window moves', function () {
  this.timeout(120_000);
  const DAY = 86_400_000;
  let pdb: PrivateDb;
  let db: Knex;
  let deps: Deps;
  let clock = new Date('2040-03-01T12:00:00Z');

  before(async () => {
    pdb = await createPrivateDb('svc_test_pairs', 2);
    db = pdb.db;
    deps = scoringDeps(db, () => clock, 1);
  });

  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  /** What runs keep, and what the window holds now, as `actor target kind n`. */
  const kept = async () =>
    (await db.raw('select actor_agent_id a, target_agent_id t, kind, n from scoring_pair_counts')).rows
      .map((x: { a: string; t: string; kind: string; n: number }) => `${x.a} ${x.t} ${x.kind} ${x.n}`)
      .sort();
  const counted = async () =>
    (
      await db.raw(
        `select actor_agent_id a, target_agent_id t, kind, count(*)::int n from interactions
         where kind in ('vote', 'reply') and active and occurred_at > ?::timestamptz - interval '90 days' and occurred_at <= ?
         group by 1, 2, 3 having count(*) >= 2`,
        [clock, clock],
      )
    ).rows
      .map((x: { a: string; t: string; kind: string; n: number }) => `${x.a} ${x.t} ${x.kind} ${x.n}`)
      .sort();
  const mark = async () =>
    new Date((await db('scoring_watermarks').where({ name: 'scoring_pairs' }).first()).watermark).toISOString();

  it('forward, at rest, back over both edges of the window, and after an unvote', async () => {
    const community = (await db('communities').where({ slug: 'general' }).first('id')).id;
    const a = await createAgent(db, { handle: 'pair_a', displayName: 'A' });
    const t = await createAgent(db, { handle: 'pair_t', displayName: 'T' });
    const post = async () =>
      (
        await db('posts')
          .insert({ community_id: community, author_id: t.id, title: 't', body: 'b', hot: 0, created_at: clock })
          .returning('id')
      )[0].id as string;
    const vote = async (at: Date) =>
      (
        await db('interactions')
          .insert({
            kind: 'vote',
            actor_agent_id: a.id,
            target_agent_id: t.id,
            post_id: await post(),
            value: 1,
            occurred_at: at,
          })
          .returning('id')
      )[0].id as string;
    const t0 = clock;
    // One vote a few hours inside the window's start, one well inside.
    await vote(new Date(t0.getTime() - 90 * DAY + 6 * 3_600_000));
    await vote(new Date(t0.getTime() - 10 * DAY));
    await runFull(deps);
    const pair = `${a.id} ${t.id} vote`;
    expect(await kept()).to.deep.equal([`${pair} 2`]);
    expect(await mark()).to.equal(t0.toISOString());

    const steps: [string, () => Promise<unknown>][] = [
      // A day on: the oldest vote leaves, a new one comes (still 2).
      [
        'forward',
        async () => {
          clock = new Date(t0.getTime() + DAY);
          await vote(new Date(clock.getTime() - 3_600_000));
        },
      ],
      ['at rest', async () => undefined],
      // Back to t0: the oldest vote is in again, the newest one is ahead of the clock (2: not 3).
      [
        'back',
        async () => {
          clock = t0;
        },
      ],
      // One more now (3), then an unvote (2), then another (none: a single row is not kept).
      [
        'a third vote',
        async () => {
          await vote(new Date(clock.getTime() - 3 * DAY));
        },
      ],
      [
        'an unvote',
        async () => {
          await db.raw(
            `update interactions set active = false, updated_at = clock_timestamp()
           where id = (select id from interactions where actor_agent_id = ? and occurred_at <= ? order by occurred_at desc limit 1)`,
            [a.id, clock],
          );
        },
      ],
      [
        'another unvote',
        async () => {
          await db.raw(
            `update interactions set active = false, updated_at = clock_timestamp()
           where id = (select id from interactions where actor_agent_id = ? and active and occurred_at <= ? order by occurred_at desc limit 1)`,
            [a.id, clock],
          );
        },
      ],
    ];
    const seen: string[][] = [];
    for (const [label, step] of steps) {
      await step();
      await runIncremental(deps);
      const want = await counted();
      expect(await kept(), label).to.deep.equal(want);
      expect(await mark(), label).to.equal(clock.toISOString());
      seen.push(want);
    }
    // The steps did reach the states they name.
    expect(seen.map((s) => s.map((x) => x.split(' ')[3]))).to.deep.equal([['2'], ['2'], ['2'], ['3'], ['2'], []]);
  });
});
