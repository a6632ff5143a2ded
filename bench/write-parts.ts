/**
 * What a vote's and a reaction's statement costs PostgreSQL, part by part (issue 31): the
 * service's own statements (captured from castVote and react, then replayed on one connection,
 * each autocommitted as the service runs it) against a fresh, seeded database, in alternating
 * rounds of four variants of that database:
 *
 * - as built;
 * - without the rank tables' writes (post_ranks and post_tag_ranks, which the hot and top feeds
 *   page by: the posts trigger that keeps them is disabled);
 * - without the interaction history (scoring's input: interaction_put becomes a function that
 *   writes nothing);
 * - without either.
 *
 * Per write: the backend's CPU (/proc, user + system), the shared-buffer block accesses and the
 * tuples written (pg_stat_database), each variant's ratio to "as built", and beside them the
 * write of bench/load.ts's `floor-contract` (one row inserted and one counter moved in one
 * statement). The variants are not
 * designs: they measure what the design's parts cost, to say what a write can be brought to
 * while keeping them. Linux only.
 *
 *   npx tsx bench/write-parts.ts                 # 1,000 writes per kind and round, 3 rounds
 *   npx tsx bench/write-parts.ts 1000 4 8          # writes, rounds, connections at once
 */
import fs from 'fs';
import knexFactory from 'knex';
import pg from 'pg';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { castVote } from '../src/votes/service';
import { react } from '../src/reactions/service';
import { NOTHING_TAKEN } from '../src/limits/types';
import { REACTION_TYPES } from '../src/content/reaction-types';
import { HOT_EPOCH_SECONDS, HOT_SCALE_SECONDS } from '../src/content/hot-rank';
import type { Deps } from '../src/deps';
import type { AgentRow } from '../src/identity/repo';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const PER_ROUND = Number(process.argv[2] || 1000);
const ROUNDS = Number(process.argv[3] || 3);
/** Connections replaying at once (each its share of the writes, in order); their backends' CPU is summed. */
const CONNECTIONS = Number(process.argv[4] || 1);
const VARIANTS = ['as built', 'no rank tables', 'no history', 'neither'] as const;
type Variant = (typeof VARIANTS)[number];
const KINDS = ['vote', 'react'] as const;

/** bench/load.ts's floor-contract write: the row and the counter its answer shows, in one statement. */
const FLOOR_WRITE = `with w as (insert into bench_floor_writes (path, body) values ($1, $2) returning id),
  c as (insert into bench_floor_counts (key, n) values ($3, 1) on conflict (key) do update set n = bench_floor_counts.n + 1 returning n)
  select w.id, c.n from w, c`;
const PUT_ARGS =
  'p_kind text, p_actor uuid, p_target uuid, p_post uuid, p_comment uuid, p_value int, p_reaction text, p_at timestamptz, p_active boolean';

interface Captured {
  text: string;
  values: unknown[];
}

/** The statements the service would run for `write`, captured instead of run (the service's SQL, unchanged). */
async function capture(write: (deps: Deps) => Promise<unknown>): Promise<Captured[]> {
  const out: Captured[] = [];
  const deps = {
    now: () => new Date(),
    limiter: { take: async () => NOTHING_TAKEN },
    query: async (st: { text: string }, values: unknown[]) => {
      let n = 0;
      out.push({ text: st.text.replace(/\?/g, () => `$${++n}`), values });
      // What each statement's caller reads back when the write went through.
      return { rows: [{ outcome: 'ok', score: 1, found: 1, raced: false, counts: {} }], rowCount: 1 };
    },
  } as unknown as Deps;
  await write(deps);
  return out;
}

/** CPU of these backends so far, in µs (clock ticks of 10 ms). */
function backendCpu(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10_000;
}

/** Runs `statements` over the connections at once, each connection its slice in order. */
async function replay(clients: pg.Client[], statements: Captured[], name: (s: Captured) => string): Promise<void> {
  await Promise.all(
    clients.map(async (c, k) => {
      for (let j = k; j < statements.length; j += clients.length)
        await c.query({ name: name(statements[j]), text: statements[j].text, values: statements[j].values });
    }),
  );
}

async function main(): Promise<void> {
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  const name = `svc_bench_write_parts_${process.pid}`;
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const url = u.toString();
  const client = new pg.Client({ connectionString: url });
  const writers = Array.from({ length: CONNECTIONS }, () => new pg.Client({ connectionString: url }));
  try {
    const db = createDb(url, 2);
    await migrateAll(db, url);
    const agentCount = PER_ROUND * 2;
    const agents = (
      await db.raw(
        `insert into agents (handle, display_name) select 'wp_' || g, 'Parts ' || g from generate_series(1, ?) g returning id, owner_id`,
        [agentCount],
      )
    ).rows as AgentRow[];
    // As bench/load.ts seeds: two tags a post, authors spread over the agents.
    await db.raw(
      `insert into posts (community_id, author_id, title, body, tags, hot, created_at)
       select (select id from communities order by slug limit 1), a.id, 'Parts post ' || g, 'body', array['tag' || (g % 30), 'load'],
              (extract(epoch from s.at) - ${HOT_EPOCH_SECONDS}) / ${HOT_SCALE_SECONDS}, s.at
         from generate_series(1, 5000) g
         cross join lateral (select now() - random() * interval '6 days' as at) s
         join lateral (select id from agents where handle = 'wp_' || (1 + g % ?)) a on true`,
      [agentCount],
    );
    await db.raw('analyze');
    const posts = (await db('posts').select('id')).map((r: { id: string }) => r.id);
    const putDef = (
      await db.raw(
        `select pg_get_functiondef('interaction_put(text,uuid,uuid,uuid,uuid,int,text,timestamptz,boolean)'::regprocedure) d`,
      )
    ).rows[0].d as string;
    await db.destroy();

    await client.connect();
    for (const w of writers) await w.connect();
    const pids = await Promise.all(
      writers.map(async (w) => (await w.query('select pg_backend_pid() p')).rows[0].p as number),
    );
    const setVariant = async (v: Variant) => {
      const ranks = v === 'as built' || v === 'no history';
      const history = v === 'as built' || v === 'no rank tables';
      await client.query(`alter table posts ${ranks ? 'enable' : 'disable'} trigger posts_ranks_update`);
      await client.query(
        history
          ? putDef
          : `create or replace function interaction_put(${PUT_ARGS}) returns bigint language sql as 'select 0::bigint'`,
      );
    };
    const counts = async () => {
      // Each backend publishes its counts at the end of its next transaction once told to.
      for (const c of [client, ...writers]) {
        await c.query('select pg_stat_force_next_flush()');
        await c.query('select 1');
      }
      await client.query('select pg_stat_clear_snapshot()');
      const r = await client.query(
        `select (blks_hit + blks_read)::float8 b, (tup_inserted + tup_updated + tup_deleted)::float8 t
           from pg_stat_database where datname = current_database()`,
      );
      return r.rows[0] as { b: number; t: number };
    };

    type Sums = { cpu: number; blocks: number; tuples: number; n: number };
    const sums = new Map<string, Sums>();
    // Each round's writes are new (agent, post) pairs: first votes and first reactions, as most of the mix's are.
    let pair = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const v of order) {
        await setVariant(v);
        for (const kind of KINDS) {
          const statements: Captured[] = [];
          for (let i = 0; i < PER_ROUND; i++, pair++) {
            const agent = agents[pair % agents.length];
            // A new (agent, post) pair every time (10M of them), spread over the posts.
            const post = posts[(pair * 7919 + Math.floor(pair / agents.length)) % posts.length];
            statements.push(
              ...(await capture((deps) =>
                kind === 'vote'
                  ? castVote(null as never, deps, agent, 'post', post, pair % 5 === 0 ? -1 : 1)
                  : react(null as never, deps, agent, 'post', post, REACTION_TYPES[pair % REACTION_TYPES.length]),
              )),
            );
          }
          const c0 = await counts();
          const t0 = backendCpu(pids);
          await replay(writers, statements, (s) => `${kind}_${s.text.length}`);
          const t1 = backendCpu(pids);
          const c1 = await counts();
          const key = `${kind}|${v}`;
          const acc = sums.get(key) ?? { cpu: 0, blocks: 0, tuples: 0, n: 0 };
          acc.cpu += t1 - t0;
          acc.blocks += c1.b - c0.b;
          acc.tuples += c1.t - c0.t;
          acc.n += PER_ROUND;
          sums.set(key, acc);
        }
      }
    }
    await setVariant('as built');

    // floor-contract's write (bench/load.ts), the same number of times on the same connection.
    await client.query(
      'create table bench_floor_writes (id bigserial primary key, path text not null, body text not null, created_at timestamptz not null default now())',
    );
    await client.query('create table bench_floor_counts (key text primary key, n bigint not null)');
    const floor = { cpu: 0, blocks: 0, tuples: 0, n: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const c0 = await counts();
      const t0 = backendCpu(pids);
      const writes = Array.from({ length: PER_ROUND }, (_, i) => {
        const path = `/api/v1/posts/${posts[(i * 7919) % posts.length]}/vote`;
        return { text: FLOOR_WRITE, values: [path, '{"value":1}', path] };
      });
      await replay(writers, writes, () => 'floor');
      const t1 = backendCpu(pids);
      const c1 = await counts();
      floor.cpu += t1 - t0;
      floor.blocks += c1.b - c0.b;
      floor.tuples += c1.t - c0.t;
      floor.n += PER_ROUND;
    }

    console.log(
      `${PER_ROUND} writes per kind, variant and round, ${ROUNDS} rounds, ${CONNECTIONS} connection(s) at once, each write autocommitted`,
    );
    for (const kind of KINDS) {
      const base = sums.get(`${kind}|as built`)!;
      console.log(`\n${kind}: µs of backend CPU, block accesses, tuples written per write (ratio to as built)`);
      for (const v of VARIANTS) {
        const s = sums.get(`${kind}|${v}`)!;
        const per = (x: number) => x / s.n;
        const ratio = (x: number, b: number) => (x / s.n / (b / base.n)).toFixed(2);
        console.log(
          `  ${v.padEnd(15)} ${per(s.cpu).toFixed(0).padStart(5)} µs (${ratio(s.cpu, base.cpu)})  ` +
            `${per(s.blocks).toFixed(1).padStart(6)} blocks (${ratio(s.blocks, base.blocks)})  ${per(s.tuples).toFixed(2)} tuples`,
        );
      }
    }
    const fb = sums.get('vote|as built')!;
    console.log(
      `\nfloor-contract's write: ${(floor.cpu / floor.n).toFixed(0)} µs (vote as built / floor: ${(fb.cpu / fb.n / (floor.cpu / floor.n)).toFixed(2)}), ` +
        `${(floor.blocks / floor.n).toFixed(1)} blocks, ${(floor.tuples / floor.n).toFixed(2)} tuples`,
    );
  } finally {
    await client.end().catch(() => undefined);
    for (const w of writers) await w.end().catch(() => undefined);
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
