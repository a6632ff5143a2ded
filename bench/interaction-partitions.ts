/**
 * What partitioning `interactions` by month (migration 109) changes, on one generated network:
 * the partitioned table against an unpartitioned copy of it as it was before (bench_flat, its
 * former indexes and unique index) on the same database. Per table: EXPLAIN ANALYZE of the window count scoring stages and of the slices
 * that leave the window in a 30-minute cycle and in a day; then the time of one interaction
 * write (a first vote, a re-vote) as the writers issue it, old and new interleaved on the
 * migrated database (interleavedWrites). Ratios partitioned/unpartitioned ("after/before").
 *
 *   npx tsx bench/interaction-partitions.ts [--size 1000000] [--history 2] [--plans]
 */
import knexFactory, { Knex } from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { ensureMonthPartitions } from '../src/db/partitions';
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

async function measure(db: Knex, now: Date, table: string) {
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
    `select count(*) from ${table} i where i.active and i.occurred_at > :ws and i.occurred_at <= :now`,
    { ws, now },
  );
  const slice = await median(
    `select count(*) from ${table} i where i.active and i.occurred_at > :prev and i.occurred_at <= :ws`,
    { prev, ws },
  );
  const day = await median(
    `select count(*) from ${table} i where i.active and i.occurred_at > :prev and i.occurred_at <= :ws`,
    { prev: windowStart(new Date(now.getTime() - 86_400_000)), ws },
  );
  return { window, slice, day };
}

/**
 * `interactions` as it was before migration 109, beside it on the same database: an unpartitioned
 * copy of its rows (bench_flat) with its former indexes, unique index and foreign keys.
 */
async function flatCopy(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('set local statement_timeout = 0');
    await trx.raw('create table bench_flat (like interactions including defaults including constraints)');
    await trx.raw('insert into bench_flat select * from interactions');
    await trx.raw(`alter table bench_flat add primary key (id),
      add foreign key (actor_agent_id) references agents(id), add foreign key (target_agent_id) references agents(id),
      add foreign key (post_id) references posts(id), add foreign key (comment_id) references comments(id)`);
    await trx.raw(`create unique index on bench_flat (kind, actor_agent_id, post_id, comment_id) nulls not distinct
        where kind in ('vote', 'reaction');
      create index on bench_flat (updated_at); create index on bench_flat (occurred_at);
      create index on bench_flat (target_agent_id, occurred_at); create index on bench_flat (actor_agent_id, occurred_at);
      create index on bench_flat (post_id); create index on bench_flat (comment_id)`);
  });
  await db.raw('vacuum (analyze) bench_flat');
}

/**
 * Writes, interleaved on one database after the migration: an unpartitioned copy of interactions
 * as it was before (bench_flat: its unique index, the writers' former upsert) beside the
 * partitioned table (interaction_put), rounds alternating which goes first, so the shared
 * machine's load falls on both alike. The same new votes and re-votes on each. Median ms.
 */
async function interleavedWrites(db: Knex, now: Date, rounds = 6, per = 100) {
  const flat = `with src as (select 1), w as (
      insert into bench_flat (id, kind, actor_agent_id, target_agent_id, post_id, comment_id, value, reaction_type, occurred_at, active)
      select nextval('interactions_id_seq'), 'vote', ?::uuid, ?::uuid, ?::uuid, null, ?::int, null, ?::timestamptz, true from src
      on conflict (kind, actor_agent_id, post_id, comment_id) where kind in ('vote', 'reaction') do update
        set value = excluded.value, reaction_type = excluded.reaction_type, occurred_at = excluded.occurred_at,
            active = excluded.active, target_agent_id = excluded.target_agent_id, updated_at = clock_timestamp()
      returning 1)
    select count(*) from w`;
  const put = `with src as (select 1), w as (
      select interaction_put('vote', ?::uuid, ?::uuid, ?::uuid, null, ?::int, null, ?::timestamptz, true) from src)
    select count(*) from w`;
  type Row = { actor: string; post: string; author: string };
  const fresh = (
    await db.raw(
      `select a.id actor, p.id post, p.author_id author from
         (select id, row_number() over (order by id) k from agents order by id limit :n) a
         join (select id, author_id, row_number() over (order by id desc) k from posts order by id desc limit :n) p on p.k = a.k
       where a.id <> p.author_id
         and not exists (select 1 from interaction_keys k where k.kind = 'vote' and k.actor_agent_id = a.id and k.subject_id = p.id)`,
      { n: rounds * per },
    )
  ).rows as Row[];
  const existing = (
    await db.raw(
      `select actor_agent_id actor, post_id post, target_agent_id author from interactions
        where kind = 'vote' and comment_id is null and occurred_at > :ws order by id limit :n`,
      { ws: windowStart(now), n: rounds * per },
    )
  ).rows as Row[];
  const ms = {
    flat: { first: [] as number[], re: [] as number[] },
    put: { first: [] as number[], re: [] as number[] },
  };
  const run = async (sql: string, rows: Row[], value: number, into: number[]) => {
    for (const r of rows) {
      const t0 = performance.now();
      await db.raw(sql, [r.actor, r.author, r.post, value, now]);
      into.push(performance.now() - t0);
    }
  };
  for (let k = 0; k < rounds; k++) {
    const f = fresh.slice(k * per, (k + 1) * per);
    const e = existing.slice(k * per, (k + 1) * per);
    const sides = k % 2 === 0 ? (['flat', 'put'] as const) : (['put', 'flat'] as const);
    for (const side of sides) {
      await run(side === 'flat' ? flat : put, f, 1, ms[side].first);
      await run(side === 'flat' ? flat : put, e, -1, ms[side].re);
    }
  }
  const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)] ?? NaN;
  return {
    n: ms.put.first.length,
    flat: { first: med(ms.flat.first), re: med(ms.flat.re) },
    put: { first: med(ms.put.first), re: med(ms.put.re) },
  };
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
    await migrateAll(db, u.toString());
    const now = new Date();
    const t0 = performance.now();
    const net = await generateNetwork(db, { interactions: size }, now);
    console.log(
      `network: ${net.interactions} interactions, ${net.agents} agents (${Math.round(performance.now() - t0)} ms)`,
    );
    // History before the window: `history` copies of the network as reply rows (no identity to
    // collide with), each 85 days further back (their months get partitions), so the window is a
    // part of the table as in a service that has run for a while.
    const history = arg('history', 0);
    if (history > 0) {
      await ensureMonthPartitions(
        db,
        'interactions',
        'occurred_at',
        new Date(now.getTime() - (history + 1) * 90 * 86_400_000),
        now,
      );
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
    await flatCopy(db);
    // Reads alternate between the two tables, twice, the better of each kept.
    const before = await measure(db, now, 'bench_flat');
    const after = await measure(db, now, 'interactions');
    const before2 = await measure(db, now, 'bench_flat');
    const after2 = await measure(db, now, 'interactions');
    for (const q of ['window', 'slice', 'day'] as const) {
      if (before2[q].ms < before[q].ms) before[q] = before2[q];
      if (after2[q].ms < after[q].ms) after[q] = after2[q];
    }
    const writes = await interleavedWrites(db, now);
    const fmt = (x: number) => x.toFixed(2);
    for (const [k, b, a] of [
      ['window count (EXPLAIN ANALYZE ms)', before.window.ms, after.window.ms],
      ['expiring 30-min slice (ms)', before.slice.ms, after.slice.ms],
      ['expiring 1-day slice (ms)', before.day.ms, after.day.ms],
      ['first vote write (median ms)', writes.flat.first, writes.put.first],
      ['re-vote write (median ms)', writes.flat.re, writes.put.re],
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
    console.log(`writes timed: ${writes.n} of each kind on each table`);
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
