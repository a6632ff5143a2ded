/**
 * What partitioning `interactions` by month (migration 109) changes, on one generated network:
 * the same database measured before the migration (one table) and after it (monthly
 * partitions). Per side: EXPLAIN ANALYZE of the window count scoring stages and of the slice
 * that leaves the window in a 30-minute cycle, and the mean time of one interaction write (a
 * first vote, and a re-vote of an existing one) as the writers issue it. Also the migration's
 * own time. Ratios after/before.
 *
 *   npx tsx bench/interaction-partitions.ts [--size 1000000] [--history 2] [--plans]
 */
import knexFactory, { Knex } from 'knex';
import { createDb } from '../src/db/knex';
import { knexMigrations, pendingMigrations } from '../src/db/migrate';
import { generateNetwork } from './gen/network';
import { windowStart } from '../src/scoring/stage-sql';

const ADMIN = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};

/** Execution time and the scanned relations of an EXPLAIN ANALYZE. */
async function explain(db: Knex, sql: string, b: Record<string, unknown>) {
  const r = await db.raw(`explain (analyze, format json) ${sql}`, b);
  const plan = r.rows[0]['QUERY PLAN'][0];
  const rels = new Set<string>();
  const walk = (n: any) => {
    if (n['Relation Name']) rels.add(n['Relation Name']);
    (n.Plans ?? []).forEach(walk);
  };
  walk(plan.Plan);
  return { ms: plan['Execution Time'] as number, relations: [...rels].sort(), plan };
}

async function measure(db: Knex, partitioned: boolean, now: Date, offset: number) {
  const ws = windowStart(now);
  const prev = windowStart(new Date(now.getTime() - 30 * 60_000));
  // Warm: one run of each, then the median of 5.
  const median = async (sql: string, b: Record<string, unknown>) => {
    await explain(db, sql, b);
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push(await explain(db, sql, b));
    runs.sort((x, y) => x.ms - y.ms);
    return runs[2];
  };
  const window = await median(
    'select count(*) from interactions i where i.active and i.occurred_at > :ws and i.occurred_at <= :now',
    { ws, now },
  );
  const slice = await median(
    'select count(*) from interactions i where i.active and i.occurred_at > :prev and i.occurred_at <= :ws',
    { prev, ws },
  );
  const day = await median(
    'select count(*) from interactions i where i.active and i.occurred_at > :prev and i.occurred_at <= :ws',
    { prev: windowStart(new Date(now.getTime() - 86_400_000)), ws },
  );
  // Writes: 300 first votes and 300 re-votes of existing ones, each its own statement as a writer's CTE.
  const pairs = (
    await db.raw(
      `select a.id actor, p.id post, p.author_id author from
         (select id, row_number() over (order by id) k from agents order by id offset :offset limit 300) a
         join (select id, author_id, row_number() over (order by id desc) k from posts order by id desc offset :offset limit 300) p on p.k = a.k
       where a.id <> p.author_id
         and not exists (select 1 from interactions i where i.kind = 'vote' and i.actor_agent_id = a.id and i.post_id = p.id)`,
      { offset },
    )
  ).rows as { actor: string; post: string; author: string }[];
  const revotes = (
    await db.raw(
      `select actor_agent_id actor, post_id post, target_agent_id author from interactions
        where kind = 'vote' and comment_id is null and occurred_at > :ws order by id offset :offset limit 300`,
      { ws, offset },
    )
  ).rows as typeof pairs;
  const write = partitioned
    ? `with src as (select 1), w as (select interaction_put('vote', ?::uuid, ?::uuid, ?::uuid, null, ?::int, null, ?::timestamptz, true) from src)
       select count(*) from w`
    : `with src as (select 1), w as (
         insert into interactions (kind, actor_agent_id, target_agent_id, post_id, comment_id, value, reaction_type, occurred_at, active)
         select 'vote', ?::uuid, ?::uuid, ?::uuid, null, ?::int, null, ?::timestamptz, true from src
         on conflict (kind, actor_agent_id, post_id, comment_id) where kind in ('vote', 'reaction') do update
           set value = excluded.value, reaction_type = excluded.reaction_type, occurred_at = excluded.occurred_at,
               active = excluded.active, target_agent_id = excluded.target_agent_id, updated_at = clock_timestamp()
         returning 1)
       select count(*) from w`;
  // The median of the writes' times: the machine is shared, a mean would carry others' bursts.
  const timeWrites = async (rows: typeof pairs, value: number) => {
    const ms: number[] = [];
    for (const r of rows) {
      const t0 = performance.now();
      await db.raw(write, [r.actor, r.author, r.post, value, now]);
      ms.push(performance.now() - t0);
    }
    ms.sort((x, y) => x - y);
    return ms[Math.floor(ms.length / 2)] ?? NaN;
  };
  const firstVote = await timeWrites(pairs, 1);
  const reVote = await timeWrites(revotes, -1);
  return { window, slice, day, firstVote, reVote, writes: { first: pairs.length, re: revotes.length } };
}

async function main() {
  const size = arg('size', 1_000_000);
  const name = `bench_parts_${Date.now().toString(36)}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = `/${name}`;
  const db = createDb(u.toString(), 2);
  try {
    const cfg = knexMigrations();
    while ((await pendingMigrations(db))[0] !== '109_interaction_partitions') await db.migrate.up(cfg);
    const now = new Date();
    const t0 = performance.now();
    const net = await generateNetwork(db, { interactions: size }, now);
    console.log(
      `network: ${net.interactions} interactions, ${net.agents} agents (${Math.round(performance.now() - t0)} ms)`,
    );
    // History before the window: `history` copies of the network as reply rows (no identity to
    // collide with), each 85 days further back, so the window is a part of the table as in a
    // service that has run for a while.
    const history = arg('history', 0);
    if (history > 0) {
      await db.transaction(async (trx) => {
        await trx.raw('set local statement_timeout = 0');
        await trx.raw(
          `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at, active)
         select 'reply', actor_agent_id, target_agent_id, post_id, 1, occurred_at - g * interval '85 days',
           updated_at - g * interval '85 days', active
         from interactions, generate_series(1, :history::int) g`,
          { history },
        );
      });
      await db.raw('vacuum (analyze) interactions');
      console.log(`history: ${history} copies, ${(await db('interactions').count('* as n'))[0].n} rows in all`);
    }
    const before = await measure(db, false, now, 0);
    const t1 = performance.now();
    await db.migrate.up(cfg);
    const migrateMs = performance.now() - t1;
    await db.raw('vacuum (analyze) interactions');
    const after = await measure(db, true, now, 300);
    const fmt = (x: number) => x.toFixed(2);
    console.log(`migration 109: ${Math.round(migrateMs)} ms`);
    for (const [k, b, a] of [
      ['window count (EXPLAIN ANALYZE ms)', before.window.ms, after.window.ms],
      ['expiring 30-min slice (ms)', before.slice.ms, after.slice.ms],
      ['expiring 1-day slice (ms)', before.day.ms, after.day.ms],
      ['first vote write (ms each)', before.firstVote, after.firstVote],
      ['re-vote write (ms each)', before.reVote, after.reVote],
    ] as const)
      console.log(`${k}: before ${fmt(b)}, after ${fmt(a)}, after/before ${fmt(a / b)}`);
    console.log(`window reads: ${after.window.relations.join(', ')}`);
    if (process.argv.includes('--plans'))
      for (const [k, m] of [
        ['before', before],
        ['after', after],
      ] as const)
        for (const q of ['window', 'day'] as const) console.log(k, q, JSON.stringify(m[q].plan.Plan, null, 1));
    console.log(`slice reads: ${after.slice.relations.join(', ')}`);
    console.log(`writes timed: ${JSON.stringify(before.writes)} before, ${JSON.stringify(after.writes)} after`);
  } finally {
    await db.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
