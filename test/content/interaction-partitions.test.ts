import { randomUUID } from 'crypto';
import { expect } from 'chai';
import { Knex } from 'knex';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { createPrivateDb, PrivateDb } from '../helpers/private-db';
import { newAgent } from '../helpers/factories';
import { newCommunity, seedPost } from './helpers';
import { knexMigrations, pendingMigrations } from '../../src/db/migrate';
import { ensureMonthPartition, monthPartitionName, monthStart } from '../../src/db/partitions';
import { stageSql, windowStart } from '../../src/scoring/stage-sql';
import { interactionsPartitions } from '../../jobs/interactions_partitions';

async function post(authorId: string): Promise<string> {
  return seedPost({ authorId, community: await newCommunity() });
}

/** The interaction rows of one identity, with the partition holding each. */
async function rowsOf(db: Knex, where: Record<string, unknown>) {
  return db('interactions')
    .where(where)
    .select('id', 'value', 'active', 'occurred_at', db.raw('tableoid::regclass::text as part'));
}

async function keyOf(db: Knex, kind: string, subject: string, actor: string) {
  return db('interaction_keys').where({ kind, subject_id: subject, actor_agent_id: actor }).first();
}

/** Detaches and drops the partitions `names` of interactions, and whatever rows they held. */
async function dropPartitions(db: Knex, names: string[]): Promise<void> {
  for (const n of names) {
    if (!(await db.raw('select to_regclass(?) is not null as p', [n])).rows[0].p) continue;
    await db.raw(`alter table interactions detach partition ${n}`);
    await db.raw(`drop table ${n}`);
  }
}

describe('content: interactions partitioned by month', function () {
  this.timeout(60_000);

  it('a re-vote in a later month moves the one row of the vote to that month’s partition (same id, key follows)', async () => {
    const ctx = await getContext();
    const [a, b] = [await newAgent(), await newAgent()];
    const id = await post(a.agent.id);
    expect((await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: 1 } })).status).to.equal(200);
    const [first] = await rowsOf(ctx.db, { kind: 'vote', actor_agent_id: b.agent.id, post_id: id });
    expect(first.part).to.equal(monthPartitionName('interactions', new Date()));
    const later = new Date(monthStart(new Date(), 1).getTime() + 86_400_000);
    ctx.setNow(later);
    try {
      expect((await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: -1 } })).status).to.equal(200);
    } finally {
      ctx.setNow(null);
    }
    const rows = await rowsOf(ctx.db, { kind: 'vote', actor_agent_id: b.agent.id, post_id: id });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.include({
      id: first.id,
      value: -1,
      active: true,
      part: monthPartitionName('interactions', later),
    });
    const key = await keyOf(ctx.db, 'vote', id, b.agent.id);
    expect([key.interaction_id, new Date(key.occurred_at).getTime()]).to.deep.equal([first.id, later.getTime()]);
  });

  it('first votes racing with different values leave one row, equal to the stored vote', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    for (let round = 0; round < 3; round++) {
      const b = await newAgent();
      const id = await post(a.agent.id);
      const values = [1, -1, 1, -1, 1, -1, 1, -1];
      const res = await Promise.all(
        values.map((value) => api('POST', `/posts/${id}/vote`, { key: b.key, body: { value } })),
      );
      expect(res.map((r) => r.status)).to.deep.equal(values.map(() => 200));
      const vote = await ctx.db('votes').where({ voter_id: b.agent.id, post_id: id }).first();
      const rows = await rowsOf(ctx.db, { kind: 'vote', actor_agent_id: b.agent.id, post_id: id });
      expect(rows.map((r) => [r.value, r.active])).to.deep.equal([[vote.value, true]]);
      expect((await keyOf(ctx.db, 'vote', id, b.agent.id)).interaction_id).to.equal(rows[0].id);
    }
  });

  it('an insert of a second row of one follow is refused (23505), as the unique index did; a direct insert records its key', async () => {
    const { db } = await getContext();
    const [a, b] = [await newAgent(), await newAgent()];
    const row = { kind: 'follow', actor_agent_id: a.agent.id, target_agent_id: b.agent.id, occurred_at: new Date() };
    const [{ id }] = await db('interactions').insert(row).returning('id');
    expect((await keyOf(db, 'follow', b.agent.id, a.agent.id)).interaction_id).to.equal(id);
    const err = await db('interactions')
      .insert(row)
      .catch((e) => e);
    expect(err.code).to.equal('23505');
    // Replies need no key: each is one new comment's row.
    expect(await db('interaction_keys').where({ kind: 'reply' })).to.have.length(0);
  });

  it('a follow whose partition was detached (archived) starts a new row; the archive keeps the old one', async () => {
    const { db } = await getContext();
    const [a, b] = [await newAgent(), await newAgent()];
    const old = new Date('2001-03-15T12:00:00Z');
    const part = monthPartitionName('interactions', old);
    try {
      expect(await ensureMonthPartition(db, 'interactions', 'occurred_at', old)).to.equal(true);
      const put = (at: Date, active: boolean) =>
        db.raw(`select interaction_put('follow', ?, ?, null, null, 1, null, ?, ?) id`, [
          a.agent.id,
          b.agent.id,
          at,
          active,
        ]);
      const oldId = (await put(old, true)).rows[0].id;
      await db.raw(`alter table interactions detach partition ${part}`);
      const now = new Date();
      const newId = (await put(now, false)).rows[0].id;
      expect(newId).to.not.equal(oldId);
      const rows = await rowsOf(db, { kind: 'follow', actor_agent_id: a.agent.id, target_agent_id: b.agent.id });
      expect(rows.map((r) => [r.id, r.active, r.part])).to.deep.equal([
        [newId, false, monthPartitionName('interactions', now)],
      ]);
      expect((await db(part).where({ actor_agent_id: a.agent.id })).map((r) => [r.id, r.active])).to.deep.equal([
        [oldId, true],
      ]);
      expect((await keyOf(db, 'follow', b.agent.id, a.agent.id)).interaction_id).to.equal(newId);
    } finally {
      await db.raw(`drop table if exists ${part}`);
    }
  });

  it('the daily job creates this month’s and the next two months’ partitions, moving the DEFAULT partition’s rows of those months', async () => {
    const ctx = await getContext();
    const [a, b] = [await newAgent(), await newAgent()];
    const now = new Date('2031-06-15T12:00:00Z');
    const names = [0, 1, 2].map((k) => monthPartitionName('interactions', monthStart(now, k)));
    try {
      await ctx.db('interactions').insert({
        kind: 'follow',
        actor_agent_id: a.agent.id,
        target_agent_id: b.agent.id,
        occurred_at: new Date('2031-07-10T00:00:00Z'),
      });
      expect((await rowsOf(ctx.db, { actor_agent_id: a.agent.id }))[0].part).to.equal('interactions_default');
      const logs: string[] = [];
      ctx.setNow(now);
      try {
        const task = interactionsPartitions(ctx.deps);
        await task({}, { logger: { info: (m: string) => logs.push(m) } } as any);
        await task({}, { logger: { info: (m: string) => logs.push(m) } } as any);
      } finally {
        ctx.setNow(null);
      }
      expect(logs).to.deep.equal([
        `interactions_partitions: ${names.join(', ')} created`,
        'interactions_partitions: none created',
      ]);
      expect((await rowsOf(ctx.db, { actor_agent_id: a.agent.id })).map((r) => r.part)).to.deep.equal([
        'interactions_2031_07',
      ]);
      const bounds = await ctx.db.raw(
        `select pg_get_expr(c.relpartbound, c.oid) b from pg_class c where c.relname = 'interactions_2031_07'`,
      );
      expect(bounds.rows[0].b).to.match(/FROM \('2031-07-01 00:00:00\+00'\) TO \('2031-08-01 00:00:00\+00'\)/);
    } finally {
      await ctx.db('interactions').where({ actor_agent_id: a.agent.id }).del();
      await ctx.db('interaction_keys').where({ actor_agent_id: a.agent.id }).del();
      await dropPartitions(ctx.db, names);
    }
  });

  it('scoring’s window reads only the partitions of its months (pruned at planning)', async () => {
    const { db } = await getContext();
    const now = new Date();
    const plan = await db.raw(`explain (format json) ${stageSql('agents')}`, {
      ws: windowStart(now),
      now,
      targets: [randomUUID()],
    });
    const scanned = new Set<string>();
    const walk = (n: any) => {
      if (n['Relation Name']) scanned.add(n['Relation Name']);
      (n.Plans ?? []).forEach(walk);
    };
    walk(plan.rows[0]['QUERY PLAN'][0].Plan);
    const parts = [...scanned].filter((r) => r.startsWith('interactions_'));
    expect(parts).to.include(monthPartitionName('interactions', now));
    expect(parts).to.not.include(monthPartitionName('interactions', monthStart(now, 1)));
    expect(parts).to.not.include(monthPartitionName('interactions', monthStart(now, 2)));
  });
});

describe('content: migration 109 partitions a database that has interactions', function () {
  this.timeout(120_000);
  let pdb: PrivateDb;
  let db: Knex;

  before(async () => {
    // Not migrated: the test steps migrations up to the partitioning one itself.
    pdb = await createPrivateDb('svc_parts', 2, false);
    db = pdb.db;
  });
  after(async () => {
    await pdb?.drop();
  });

  it('keeps every row and id, creates the months holding rows, keys the votes, reactions and follows; down restores the table', async () => {
    const cfg = knexMigrations();
    while ((await pendingMigrations(db))[0] !== '109_interaction_partitions') await db.migrate.up(cfg);
    const [a, b] = await db('agents')
      .insert([
        { handle: 'part_a', display_name: 'A' },
        { handle: 'part_b', display_name: 'B' },
      ])
      .returning('id')
      .then((r) => r.map((x) => x.id));
    const community = (await db('communities').first('id')).id;
    const [{ id: postId }] = await db('posts')
      .insert({ community_id: community, author_id: b, title: 't', body: 'b', hot: 0 })
      .returning('id');
    const [{ id: commentId }] = await db('comments')
      .insert({ post_id: postId, author_id: a, body: 'c' })
      .returning('id');
    const old = new Date('2025-01-20T10:00:00Z');
    const rows = [
      { kind: 'vote', actor_agent_id: a, target_agent_id: b, post_id: postId, value: -1, occurred_at: old },
      {
        kind: 'reaction',
        actor_agent_id: a,
        target_agent_id: b,
        post_id: postId,
        reaction_type: 'fire',
        occurred_at: new Date(),
      },
      { kind: 'follow', actor_agent_id: b, target_agent_id: a, occurred_at: old, active: false },
      {
        kind: 'reply',
        actor_agent_id: a,
        target_agent_id: b,
        post_id: postId,
        reply_comment_id: commentId,
        occurred_at: new Date(),
      },
    ];
    await db('interactions').insert(rows);
    const before = await db('interactions').orderBy('id');

    await db.migrate.up(cfg);
    expect((await db.raw(`select relkind from pg_class where relname = 'interactions'`)).rows[0].relkind).to.equal('p');
    expect(await db('interactions').orderBy('id')).to.deep.equal(before);
    const parts = await db.raw(
      `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'interactions'::regclass`,
    );
    expect(parts.rows.map((r: { relname: string }) => r.relname)).to.include.members([
      'interactions_default',
      'interactions_2025_01',
      monthPartitionName('interactions', new Date()),
      monthPartitionName('interactions', monthStart(new Date(), 2)),
    ]);
    const keys = await db('interaction_keys').orderBy('interaction_id');
    expect(keys.map((k) => [k.kind, k.interaction_id])).to.deep.equal(
      before.filter((r) => r.kind !== 'reply').map((r) => [r.kind, r.id]),
    );
    // The old vote changes in place, moving from January 2025 to this month; new rows get new ids.
    const vote = before.find((r) => r.kind === 'vote');
    const put = await db.raw(`select interaction_put('vote', ?, ?, ?, null, 1, null, now(), true) id`, [a, b, postId]);
    expect(put.rows[0].id).to.equal(vote.id);
    const moved = await db('interactions')
      .where({ kind: 'vote' })
      .select('value', db.raw('tableoid::regclass::text p'));
    expect(moved).to.deep.equal([{ value: 1, p: monthPartitionName('interactions', new Date()) }]);
    const [{ id: next }] = await db('interactions')
      .insert({ kind: 'vote', actor_agent_id: b, target_agent_id: b, post_id: postId, occurred_at: new Date() })
      .returning('id');
    expect(Number(next)).to.be.greaterThan(Math.max(...before.map((r) => Number(r.id))));

    await db.migrate.down(cfg);
    expect((await db.raw(`select relkind from pg_class where relname = 'interactions'`)).rows[0].relkind).to.equal('r');
    expect(await db('interactions')).to.have.length(before.length + 1);
    const dup = await db('interactions')
      .insert({ kind: 'vote', actor_agent_id: b, target_agent_id: b, post_id: postId, occurred_at: new Date() })
      .catch((e) => e);
    expect(dup.code).to.equal('23505');
  });
});
