/**
 * Mixed load against the real server process: 80% reads (feed hot/new, post detail, comments,
 * leaderboards, reputation, profiles), 20% writes (posts, comments, votes, reactions, follows)
 * kept inside the rate limits by a client-side schedule over many agents. Also leaderboard-only
 * and reputation-only reads. Every figure is a ratio to a bare Koa route (its own child process)
 * measured in the same run.
 *
 *   npx tsx bench/load.ts [--seconds 12] [--rounds 3] [--connections 16] [--agents 800] [--posts 5000] [--breakdown] [--warmup 8] [--cpu-prof DIR] [--log-level info] [--only mixed,lb,rep,writes,floor,floor-limited,floor-reads,floor-contract] [--write-share 0.2] [--shares 0.05,0.35] [--body-words 0] [--hold] [--replica] [--ab DIR] [--size large|both [--population 100000] [--votes 5000000] [--large-posts 1000000] [--template T]] [--keep]
 *
 * `--size large`: instead of --agents agents and --posts posts inserted by SQL, the data set of
 * bench/lib/large-seed.ts by COPY (default 1,000,000 posts, 100,000 agents with owners,
 * 5,000,000 votes with their interactions); the mix acts as --agents of those agents (spread over
 * all) and targets 2,000 posts drawn from all. `--template T` copies the seeded rows from database
 * T (a file copy: seconds, not the seed's minutes), seeding T first when it does not exist, then
 * migrates the copy to this tree's schema; T stays for the next run (drop it by hand). `--keep` leaves the run's database (its name is printed).
 *
 * `--size both [--large-posts 1000000]`: today's data set and the large one (copied from
 * `--template`, default svc_bench_load_large) in one run, each served by its own web process and
 * worker; rounds rotate today's mix, the large mix and the floors, and the large mix is compared
 * with today's (and each with `floor-reads`) under one machine state: sizes measured in separate
 * runs on this shared machine differed by ±30 % from the load alone. CPU per request is counted for
 * each size's own processes and database; each worker's also over all rounds and the drain after.
 *
 * `--ab DIR`: the mix, leaderboard and reputation reads are also measured on the tree in DIR (its
 * dist/ built, same schema): a second web process from DIR/dist/src/server.js on the same database,
 * measured in the same interleaved rounds (which of the two goes first alternates), the mixes each
 * writing as its own half of the agents. A change is
 * compared with the tree before it under one machine state, which separate runs on a shared
 * machine cannot do.
 *
 * `--replica`: the database is a private primary with a streaming replica (test/helpers/pg-replica.ts)
 * instead of the machine's PostgreSQL, and a second web process whose lag-tolerant reads go to
 * the replica (DATABASE_READ_URL) runs beside the first (reads on the primary): the mix is
 * measured on both in interleaved rounds, each over its own half of the agents.
 *
 * The server is `node dist/src/server.js` when dist/ is built (`--tsx` runs src/server.ts
 * through tsx instead), against a fresh database on the machine's PostgreSQL
 * (BENCH_ADMIN_DATABASE_URL) and the machine's Redis (REDIS_URL); the database is dropped at the end.
 */
import { spawn, spawnSync, ChildProcess } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import knexFactory, { type Knex } from 'knex';
import autocannon from 'autocannon';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { issueApiKey } from '../src/identity/service';
import { SCOPES } from '../src/identity/scopes';
import { HOT_EPOCH_SECONDS, HOT_SCALE_SECONDS } from '../src/content/hot-rank';
import { Classify, procAvailable, readCpu, spent, svcClassifier, SvcRole } from './lib/proc-cpu';
import { numberArg } from './lib/args';
import { seededBodySql } from './lib/bodies';
import { mixTargets, seedLarge } from './lib/large-seed';
import { startPgReplicaPair } from '../test/helpers/pg-replica';

const SECONDS = numberArg('seconds', 12);
/** Each workload's SECONDS are split into this many slices, interleaved with the other workloads'. */
const ROUNDS = numberArg('rounds', 3);
const CONNECTIONS = numberArg('connections', 16);
const AGENTS = numberArg('agents', 800);
/**
 * `--size large`: the data set of bench/lib/large-seed.ts instead of today's; `--size both`: today's
 * and the large one, each with its own web process and worker, measured in interleaved rounds.
 */
const SIZE = (() => {
  const i = process.argv.indexOf('--size');
  return i > 0 ? process.argv[i + 1] : 'small';
})();
if (!['small', 'large', 'both'].includes(SIZE)) throw new Error(`--size ${SIZE}: small, large or both`);
const LARGE = SIZE === 'large';
const BOTH = SIZE === 'both';
const POSTS = numberArg('posts', LARGE ? 1_000_000 : 5000);
/** With --size large or both: all agents (AGENTS of them act in the mix), posts and votes seeded. */
const POPULATION = numberArg('population', 100_000);
const VOTES = numberArg('votes', 5_000_000);
const LARGE_OPTS = { population: POPULATION, posts: LARGE ? POSTS : numberArg('large-posts', 1_000_000), votes: VOTES };
/**
 * `--template T`: the large data set is copied from database T (seeded there first if missing);
 * `--size both` always copies, from svc_bench_load_large unless told.
 */
const TEMPLATE = (() => {
  const i = process.argv.indexOf('--template');
  return i > 0 ? process.argv[i + 1] : BOTH ? 'svc_bench_load_large' : null;
})();
/** Share of writes in the mix (the issue's workload: 0.2); 0 measures its reads alone. */
const WRITE_SHARE = numberArg('write-share', 0.2);
/**
 * `--shares 0.05,0.35`: the mix also at these write shares, measured in the same rounds, so the
 * CPU a request costs can be fitted as a line over the share of writes: what a read and what a
 * write cost inside the mix (each alone, `--breakdown`, runs at another concurrency of its kind).
 */
const EXTRA_SHARES = (() => {
  const i = process.argv.indexOf('--shares');
  return i > 0 ? process.argv[i + 1].split(',').map(Number) : [];
})();
/**
 * Seeded post bodies: 0 (default) repeats one sentence (5 distinct words, as every run before
 * this option); N > 0 draws N pseudo-random words per post (about 6.5 characters each), whose
 * variety is what full-text indexing pays for.
 */
const BODY_WORDS = numberArg('body-words', 0);
/**
 * Seconds of the mix each server serves before anything is measured (its floors 2 s): a fresh
 * Node process compiles its hot code during its first thousands of requests (V8's helper threads
 * were a third of the web process's CPU in the first second of the mix) and fresh PostgreSQL
 * connections plan their statements; a running service has done both long before.
 */
const WARMUP = numberArg('warmup', 8);
let ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REPLICA = process.argv.includes('--replica');
/** `--ab DIR`: the other tree whose mix is measured beside this one's. */
const AB_DIR = (() => {
  const i = process.argv.indexOf('--ab');
  return i > 0 ? path.resolve(process.argv[i + 1]) : null;
})();
const REDIS = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const ROOT = path.resolve(__dirname, '..');
const USE_DIST = !process.argv.includes('--tsx') && fs.existsSync(path.join(ROOT, 'dist/src/server.js'));
/** Also measure each read kind and the writes alone (short runs, once the worker's queue is drained), to see where the time goes. */
const BREAKDOWN = process.argv.includes('--breakdown');
/** Measurements to run: any of mixed, lb, rep, writes, floor, floor-limited, floor-reads, floor-contract (the mix's floors, FLOOR below); default mixed, lb, rep. */
const ONLY = (() => {
  const i = process.argv.indexOf('--only');
  return i > 0 ? process.argv[i + 1].split(',') : ['mixed', 'lb', 'rep'];
})();
/** The server's log level (production default: info). */
const LOG_LEVEL = (() => {
  const i = process.argv.indexOf('--log-level');
  return i > 0 ? process.argv[i + 1] : 'info';
})();
/** Directory for a V8 CPU profile of the server process (written when it exits). */
const CPU_PROF = (() => {
  const i = process.argv.indexOf('--cpu-prof');
  return i > 0 ? path.resolve(process.argv[i + 1]) : null;
})();

function dbUrl(name: string): string {
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  return u.toString();
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

interface Agent {
  id: string;
  handle: string;
  key: string;
}

interface Seeded {
  agents: Agent[];
  posts: string[];
  authorOf: Map<string, string>;
  /** Owners of the agents that have one (the mix's agents and the authors of its posts). */
  ownerOf: Map<string, string>;
  summary: string;
}

/** Migrates and seeds the data set of bench/lib/large-seed.ts into database `name`; says what it seeded. */
async function seedLargeInto(name: string): Promise<string> {
  const url = dbUrl(name);
  const db = createDb(url, 1);
  await migrateAll(db, url);
  await db.destroy();
  // Seeding statements run for minutes: one connection of its own without the service's timeout.
  const seedDb = knexFactory({ client: 'pg', connection: url, pool: { min: 1, max: 1 } });
  try {
    await seedDb.raw('set statement_timeout = 0');
    return await seedLarge(seedDb, LARGE_OPTS);
  } finally {
    await seedDb.destroy();
  }
}

/**
 * --size large: seeds the run's database `name` by COPY, or with `--template T` copies database T
 * (seeded first when it does not exist, and left in place for the next run). Then issues the keys.
 */
async function seedLargeRun(admin: Knex, name: string): Promise<Seeded> {
  if (BODY_WORDS) throw new Error('--size large seeds the repeated body only (--body-words 0)');
  let summary: string;
  if (TEMPLATE) {
    const exists = (await admin.raw('select 1 from pg_database where datname = ?', [TEMPLATE])).rows.length > 0;
    if (!exists) await admin.raw(`create database "${TEMPLATE}"`);
    summary = exists
      ? `template ${TEMPLATE} (seeded before)`
      : `${await seedLargeInto(TEMPLATE)}, as template ${TEMPLATE}`;
    const t0 = Date.now();
    await admin.raw(`drop database if exists "${name}"`);
    await admin.raw(`create database "${name}" template "${TEMPLATE}" strategy file_copy`);
    summary += `, copied in ${((Date.now() - t0) / 1000).toFixed(0)} s`;
  } else summary = await seedLargeInto(name);
  const { agents: keyed, ...targets } = mixTargets(LARGE_OPTS, AGENTS, 2000);
  const db = createDb(dbUrl(name), 1);
  // A template seeded by an earlier tree gets this tree's later migrations (the server refuses an older schema).
  if (TEMPLATE) await migrateAll(db, dbUrl(name));
  const agents: Agent[] = [];
  for (const a of keyed)
    agents.push({ id: a.id, handle: a.handle, key: (await issueApiKey(db, a.id, [...SCOPES])).key });
  await db.destroy();
  return { ...targets, agents, summary: `seeded ${summary}; ${agents.length} API keys` };
}

async function seed(url: string): Promise<Seeded> {
  const t0 = Date.now();
  const db = createDb(url, 4);
  await migrateAll(db, url);
  const tag = Date.now().toString(36);
  const rows = (
    await db.raw(
      `insert into agents (handle, display_name, created_at) select 'l' || ? || '_' || g, 'Load ' || g, now() - (g % 60) * interval '1 day' from generate_series(1, ?) g returning id, handle`,
      [tag, AGENTS],
    )
  ).rows as { id: string; handle: string }[];
  const agents: Agent[] = [];
  for (const r of rows)
    agents.push({ id: r.id, handle: r.handle, key: (await issueApiKey(db, r.id, [...SCOPES])).key });
  await db.raw(
    `insert into posts (community_id, author_id, title, body, tags, score, upvotes, downvotes, comments_count, hot, created_at)
     select c.id, a.id, 'Load post ' || g, ${seededBodySql(BODY_WORDS)}, array['tag' || (g % 30), 'load'],
            0, 0, 0, 0, (extract(epoch from s.created_at) - ${HOT_EPOCH_SECONDS}) / ${HOT_SCALE_SECONDS}, s.created_at
       from generate_series(1, ?) g
       cross join lateral (select date_trunc('milliseconds', now() - random() * interval '6 days') as created_at) s
       join lateral (select id from agents where handle = 'l' || ? || '_' || (1 + g % ?)) a on true
       join lateral (select id from communities order by slug offset (g % 4) limit 1) c on true`,
    [POSTS, tag, AGENTS],
  );
  await db.raw('analyze');
  const rows2 = await db('posts').orderBy('created_at', 'desc').limit(2000).select('id', 'author_id');
  const posts = rows2.map((r: any) => r.id as string);
  await db.destroy();
  return {
    agents,
    posts,
    authorOf: new Map(rows2.map((r: any) => [r.id as string, r.author_id as string])),
    ownerOf: new Map(),
    summary: `seeded ${agents.length} agents with keys and ${POSTS} posts${BODY_WORDS ? ` of ${BODY_WORDS} words` : ''} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  };
}

/**
 * Waits until the worker has run every job due or coming (the recomputes just queued, the scoring
 * run the writes debounced), so no run over the seeded rows falls inside a measurement; a job
 * that has used up its attempts no longer counts. Says how long it waited and what failed.
 */
async function drainJobs(url: string): Promise<string> {
  const db = createDb(url, 1);
  const t0 = Date.now();
  try {
    for (;;) {
      const { rows } = await db.raw(
        `select count(*) filter (where attempts < max_attempts)::int as pending,
                coalesce(string_agg(distinct task_identifier || ': ' || left(last_error, 120), '; '), '') as errors
           from graphile_worker.jobs`,
      );
      const waited = ((Date.now() - t0) / 1000).toFixed(0);
      if (rows[0].pending === 0 || Date.now() - t0 > 1_800_000)
        return `worker queue ${rows[0].pending ? `still holds ${rows[0].pending} jobs` : 'drained'} after ${waited} s${rows[0].errors ? ` (errors met: ${rows[0].errors})` : ''}`;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await db.destroy();
  }
}

/** `stdout`: a file descriptor for the child's standard output (the server's logs), else discarded. */
function startChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  stdout?: number,
  cwd = ROOT,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', stdout ?? 'ignore', 'inherit'] });
  return new Promise((resolve, reject) => {
    const until = Date.now() + 60_000;
    child.once('exit', (c) => reject(new Error(`${args.join(' ')} exited with ${c}`)));
    const poll = () =>
      fetch(`http://127.0.0.1:${port}/`)
        .then(() => resolve(child))
        .catch(() => (Date.now() > until ? reject(new Error('server did not start')) : setTimeout(poll, 100)));
    poll();
  });
}

const BARE = `
const Koa = require('koa'); const app = new Koa();
app.use(async (ctx) => { ctx.body = { data: { id: 'x', handle: '@bare', score: 1 } }; });
require('http').createServer(app.callback()).listen(Number(process.env.PORT), '127.0.0.1');`;

/**
 * The floor of the mixed workload: the least any server could do for it while keeping each write
 * in PostgreSQL before answering (test/faults asks that of every 2xx). A GET answers a body
 * already in memory, of the mix's mean size; anything else reads its body and writes it as one
 * autocommitted row (one round trip, no auth, no check, no limiter, no event). Driven by the same
 * request generator as the mix, so the load generator's share is the same. With LIMIT_REDIS set
 * (workload `floor-limited`), each write first makes the one Redis round trip a limit shared by
 * several web processes needs (an INCR with its expiry in one MULTI), and nothing else. With
 * READ_ROWS set (`floor-reads`), the reads of one post, its comments or one profile (44 % of the
 * mix's reads, spread over the mix's posts and agents) each make one primary-key query first.
 * With CONTRACT set too (`floor-contract`, with the Redis round trip), the least the contract asks
 * beyond that: a write hashes the caller's key (looked up in memory), parses its body, and in the
 * same one statement moves the counter its answer and later reads show (a post's score, comment or
 * reaction count, a follower count, a community's post count); a read of one post, one profile or
 * a post's comments answers the rows it read, as JSON. No event, job or check is written.
 */
const FLOOR = `
const Koa = require('koa'); const { Pool } = require('pg'); const app = new Koa();
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const redis = process.env.LIMIT_REDIS ? new (require('ioredis'))(process.env.LIMIT_REDIS) : null;
const read = JSON.stringify({ data: { id: 'x', text: 'r'.repeat(Number(process.env.READ_BYTES)) } });
const contract = !!process.env.CONTRACT;
const row = (p) => contract && p.endsWith('/comments') ? ['select * from comments where post_id = $1 order by created_at limit 100', p.slice(14, 50)]
  : p.startsWith('/api/v1/posts/') ? ['select * from posts where id = $1', p.slice(14, 50)]
  : p.startsWith('/api/v1/agents/') && !p.endsWith('/reputation') ? ['select * from agents where handle = $1', p.slice(15)] : null;
const keys = new Map();
const WRITE = 'insert into bench_floor_writes (path, body) values ($1, $2) returning id';
const COUNTED = \`with w as (insert into bench_floor_writes (path, body) values ($1, $2) returning id),
  c as (insert into bench_floor_counts (key, n) values ($3, 1) on conflict (key) do update set n = bench_floor_counts.n + 1 returning n)
  select w.id, c.n from w, c\`;
app.use(async (ctx) => {
  if (ctx.method === 'GET') {
    const q = process.env.READ_ROWS && row(ctx.path);
    const r = q && await pool.query(q[0], [q[1]]);
    ctx.type = 'json'; ctx.body = contract && r ? JSON.stringify({ data: r.rows }) : read; return;
  }
  const chunks = []; for await (const c of ctx.req) chunks.push(c);
  const text = Buffer.concat(chunks).toString();
  let key = ctx.path;
  if (contract) {
    // The caller's key, by its hash, from memory; the body parsed and checked for an object.
    const auth = ctx.get('authorization');
    const h = require('crypto').createHash('sha256').update(auth).digest('hex');
    if (!keys.has(h)) keys.set(h, { id: h.slice(0, 8) });
    const body = JSON.parse(text);
    if (typeof body !== 'object' || body === null) ctx.throw(400);
    if (ctx.path === '/api/v1/posts') key += ':' + body.communitySlug;
  }
  if (redis) await redis.multi().incr('floor:' + key).expire('floor:' + key, 60).exec();
  const r = contract ? await pool.query({ name: 'counted', text: COUNTED, values: [ctx.path, text, key] })
    : await pool.query(WRITE, [ctx.path, text]);
  ctx.status = 201; ctx.body = { data: { id: r.rows[0].id, count: r.rows[0].n } };
});
require('http').createServer(app.callback()).listen(Number(process.env.PORT), '127.0.0.1');`;
/** The floor's read body: its mean answer (small writes included) comes to the mix's, about 3.1 kB with headers. */
const FLOOR_READ_BYTES = 3700;

type Req = { method: string; path: string; headers?: Record<string, string>; body?: string };

/** Client-side schedule that keeps every agent inside its per-action limits (decisions: part 8). */
class Writer {
  /** Thread gaps (agent, post) of comments. */
  private next = new Map<string, number>();
  /**
   * Per kind, the agents in the order they become free: a gap is the same for every agent of a
   * kind, so the queue stays sorted and a pick is O(1) (the load generator shares the CPU).
   */
  private queues: Record<keyof Writer['gap'], { agent: Agent; freeAt: number }[]>;
  constructor(
    private agents: Agent[],
    private posts: string[],
    private slugs: string[],
    private authorOf: Map<string, string>,
    private ownerOf: Map<string, string>,
  ) {
    const queue = () => agents.map((agent) => ({ agent, freeAt: 0 }));
    this.queues = { post: queue(), comment: queue(), vote: queue(), react: queue(), follow: queue() };
  }
  private gap = { post: 6500, comment: 4000, vote: 2200, react: 2200, follow: 4500 } as const;
  pick(kind: keyof Writer['gap']): Agent | null {
    const q = this.queues[kind];
    const now = Date.now();
    if (q[0].freeAt > now) return null;
    const head = q.shift()!;
    head.freeAt = now + this.gap[kind];
    q.push(head);
    return head.agent;
  }
  /**
   * A random post; with `voter`, one written neither by it nor by an agent of its owner (such a
   * vote is refused with a 400).
   */
  post(voter?: Agent): string {
    for (;;) {
      const p = this.posts[Math.floor(Math.random() * this.posts.length)];
      const author = this.authorOf.get(p)!;
      if (!voter) return p;
      const owner = this.ownerOf.get(voter.id);
      if (author !== voter.id && (owner === undefined || this.ownerOf.get(author) !== owner)) return p;
    }
  }
  request(): Req | null {
    const r = Math.random();
    const json = (a: Agent, method: string, p: string, body: object): Req => ({
      method,
      path: p,
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r < 0.1) {
      const a = this.pick('post');
      return (
        a &&
        json(a, 'POST', '/api/v1/posts', {
          communitySlug: this.slugs[Math.floor(Math.random() * this.slugs.length)],
          title: 'load',
          body: 'load test post body',
          tags: ['load'],
        })
      );
    }
    if (r < 0.3) {
      const a = this.pick('comment');
      if (!a) return null;
      // Never the same thread twice within 15 s for one agent (its per-thread gap).
      const now = Date.now();
      for (let i = 0; i < 5; i++) {
        const p = this.post();
        const k = `thread:${a.id}:${p}`;
        if ((this.next.get(k) ?? 0) > now) continue;
        this.next.set(k, now + 15_500);
        return json(a, 'POST', `/api/v1/posts/${p}/comments`, { body: 'load comment' });
      }
      return null;
    }
    if (r < 0.65) {
      const a = this.pick('vote');
      return a && json(a, 'POST', `/api/v1/posts/${this.post(a)}/vote`, { value: Math.random() < 0.8 ? 1 : -1 });
    }
    if (r < 0.85) {
      const a = this.pick('react');
      return (
        a &&
        json(a, 'POST', `/api/v1/posts/${this.post()}/react`, {
          type: ['love', 'fire', 'funny', 'smart', 'savage'][Math.floor(Math.random() * 5)],
        })
      );
    }
    const a = this.pick('follow');
    const t = this.agents[Math.floor(Math.random() * this.agents.length)];
    return a && t.id !== a.id ? json(a, 'POST', `/api/v1/agents/${t.handle}/follow`, {}) : null;
  }
}

/** The read mix: share of reads, label, request. */
function readKinds(agents: Agent[], posts: string[]): [number, string, () => Req][] {
  const cats = ['overall', 'helpful', 'funny', 'debater', 'rising', 'savage'];
  const any = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)];
  return [
    [0.2, 'GET /feed?sort=hot', () => ({ method: 'GET', path: '/api/v1/feed?sort=hot' })],
    [0.1, 'GET /feed?sort=new', () => ({ method: 'GET', path: '/api/v1/feed?sort=new' })],
    [0.15, 'GET /posts/{id}', () => ({ method: 'GET', path: `/api/v1/posts/${any(posts)}` })],
    [0.15, 'GET /posts/{id}/comments', () => ({ method: 'GET', path: `/api/v1/posts/${any(posts)}/comments` })],
    [0.12, 'GET /leaderboards', () => ({ method: 'GET', path: `/api/v1/leaderboards?category=${any(cats)}` })],
    [
      0.14,
      'GET /agents/{handle}/reputation',
      () => ({ method: 'GET', path: `/api/v1/agents/${any(agents).handle}/reputation` }),
    ],
    [0.14, 'GET /agents/{handle}', () => ({ method: 'GET', path: `/api/v1/agents/${any(agents).handle}` })],
  ];
}

function reads(agents: Agent[], posts: string[]): () => Req {
  const kinds = readKinds(agents, posts);
  return () => {
    let r = Math.random();
    for (const [share, , req] of kinds) {
      if (r < share) return req();
      r -= share;
    }
    return kinds[kinds.length - 1][2]();
  };
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  p999: number;
  total: number;
  non2xx: number;
  errors: number;
  s5xx: number;
  s429: number;
  /** Mean response size, headers included. */
  bytes: number;
  seconds: number;
  /** CPU milliseconds each role spent during the run (Linux), and the machine's idle share. */
  cpu: Map<SvcRole, number>;
  idle: number;
}

/** This run's processes (set once its children have started). */
let classify: Classify<SvcRole> = () => null;

/** `cls`: the processes whose CPU counts (default: this run's, `classify`). */
async function measure(port: number, next: () => Req, seconds: number, cls = classify): Promise<Result> {
  const status = new Map<number, number>();
  const inst = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ setupRequest: (req: any) => ({ ...req, ...next() }) }],
  } as any);
  (inst as any).on('response', (_c: unknown, code: number) => status.set(code, (status.get(code) ?? 0) + 1));
  if (procAvailable) await refreshWorkerBackends();
  const before = procAvailable ? readCpu(cls) : null;
  const r: any = await inst;
  if (procAvailable) await refreshWorkerBackends();
  const used = before ? spent(before, readCpu(cls)) : null;
  const cpu = new Map<SvcRole, number>([...(used?.byRole ?? [])].map(([role, t]) => [role, t.user + t.sys]));
  // 'pg' stays all of PostgreSQL's (the targets compare it); 'pgWorker' is the worker's share of it.
  cpu.set('pg', (cpu.get('pg') ?? 0) + (cpu.get('pgWorker') ?? 0));
  let s5xx = 0;
  for (const [s, n] of status) if (s >= 500) s5xx += n;
  return {
    rps: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    p999: r.latency.p99_9 ?? r.latency.p999,
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    s5xx,
    s429: status.get(429) ?? 0,
    bytes: Math.round(r.throughput.total / Math.max(1, r.requests.total)),
    seconds: r.duration,
    cpu,
    idle: used?.idleShare ?? 0,
  };
}

/** Several measurements of one workload as one: summed counts, req/s over the summed time, median p50, worst p99 and p99.9. */
function combine(parts: Result[]): Result {
  const sum = (f: (m: Result) => number) => parts.reduce((n, m) => n + f(m), 0);
  const seconds = sum((m) => m.seconds);
  const total = sum((m) => m.total);
  const p50s = parts.map((m) => m.p50).sort((a, b) => a - b);
  return {
    rps: total / Math.max(seconds, 1e-9),
    p50: p50s[Math.floor(p50s.length / 2)] ?? 0,
    p99: Math.max(0, ...parts.map((m) => m.p99)),
    p999: Math.max(0, ...parts.map((m) => m.p999)),
    total,
    non2xx: sum((m) => m.non2xx),
    errors: sum((m) => m.errors),
    s5xx: sum((m) => m.s5xx),
    s429: sum((m) => m.s429),
    bytes: Math.round(sum((m) => m.bytes * m.total) / Math.max(1, total)),
    seconds,
    cpu: parts.reduce((acc, m) => {
      for (const [role, ms] of m.cpu) acc.set(role, (acc.get(role) ?? 0) + ms);
      return acc;
    }, new Map<SvcRole, number>()),
    idle: sum((m) => m.idle * m.seconds) / Math.max(seconds, 1e-9),
  };
}

/** Where one workload's CPU went: microseconds per request by process, cores busy, machine idle. */
function cpuRow(label: string, m: Result): string {
  const roles: SvcRole[] = ['web', 'pg', 'worker', 'redis', 'bench', 'bare'];
  const us = (role: SvcRole) => cpuPerRequest(m, role).toFixed(0);
  const allMs = roles.reduce((n, role) => n + (m.cpu.get(role) ?? 0), 0);
  return `| ${label} | ${us('web')} | ${us('pg')} (${us('pgWorker')}) | ${roles.slice(2).map(us).join(' | ')} | ${((1000 * allMs) / Math.max(1, m.total)).toFixed(0)} | ${(allMs / 1000 / Math.max(m.seconds, 1e-9)).toFixed(2)} | ${(100 * m.idle).toFixed(0)} % |`;
}

/** SIGTERM to each running child, then waits for all to exit (SIGKILL after `graceMs`). */
async function stopChildren(children: ChildProcess[], graceMs = 15_000): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }),
  );
}

/** CPU microseconds per request that one process role spent on a workload. */
function cpuPerRequest(m: Result, role: SvcRole): number {
  return (1000 * (m.cpu.get(role) ?? 0)) / Math.max(1, m.total);
}

/**
 * `--shares`: each share's rate and CPU per request, and by role the least-squares line of CPU per
 * request over the share of writes sent: its value at 0 is what a read costs inside the mix, at 1
 * what a write costs (with the reads' and writes' effects on each other, such as cache evictions).
 */
function printShareFit(points: { share: number; result: Result }[], floorReads: Result | null): void {
  console.log('\nthe mix by share of writes sent: req/s (/ floor-reads), µs per request web, PostgreSQL');
  for (const p of [...points].sort((a, b) => a.share - b.share))
    console.log(
      `  ${(100 * p.share).toFixed(1).padStart(5)} %: ${Math.round(p.result.rps)}${floorReads ? ` (${(p.result.rps / floorReads.rps).toFixed(3)})` : ''}, ${cpuPerRequest(p.result, 'web').toFixed(0)}, ${cpuPerRequest(p.result, 'pg').toFixed(0)}`,
    );
  for (const role of ['web', 'pg'] as const) {
    const xs = points.map((p) => p.share);
    const ys = points.map((p) => cpuPerRequest(p.result, role));
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    const slope =
      xs.reduce((a, x, k) => a + (x - mx) * (ys[k] - my), 0) /
      Math.max(
        1e-12,
        xs.reduce((a, x) => a + (x - mx) ** 2, 0),
      );
    const read = my - slope * mx;
    const base = floorReads ? cpuPerRequest(floorReads, role) : 0;
    console.log(
      `  fitted ${role === 'pg' ? 'PostgreSQL' : 'web'} µs: a read in the mix ${read.toFixed(0)}, a write ${(read + slope).toFixed(0)}${base ? ` (floor-reads: ${base.toFixed(0)} a request)` : ''}`,
    );
  }
}

/**
 * Issue 31's targets, for the workloads measured (null: not measured), each missed one as a line:
 * the mix at >= 0.6 of floor-reads, its web and PostgreSQL CPU per request <= 2x of floor-reads',
 * no 5xx or 429, p99 <= 25 ms; leaderboard and reputation reads at >= 0.6 of the bare route.
 */
function targetsMissed(r: {
  mix: Result | null;
  floorReads: Result | null;
  bare: Result;
  lb: Result | null;
  rep: Result | null;
}): string[] {
  const missed: string[] = [];
  const need = (ok: boolean, what: string) => {
    if (!ok) missed.push(what);
  };
  const { mix, floorReads: floor } = r;
  if (mix) {
    need(WRITE_SHARE === 0.2, `mixed: the workload's write share is 0.2 (this run: ${WRITE_SHARE})`);
    need(mix.p99 <= 25, `mixed: p99 <= 25 ms (${mix.p99} ms)`);
    if (floor) {
      const ratio = mix.rps / floor.rps;
      need(ratio >= 0.6, `mixed >= 0.6 of floor-reads (${ratio.toFixed(3)})`);
      if (procAvailable)
        for (const [role, name] of [
          ['web', 'web'],
          ['pg', 'PostgreSQL'],
        ] as const) {
          const x = cpuPerRequest(mix, role) / Math.max(1e-9, cpuPerRequest(floor, role));
          need(x <= 2, `mixed: ${name} CPU per request <= 2x of floor-reads' (${x.toFixed(2)}x)`);
        }
    }
  }
  for (const [name, m] of [
    ['mixed', mix],
    ['GET /leaderboards', r.lb],
    ['GET /agents/{handle}/reputation', r.rep],
  ] as const)
    if (m) need(m.s5xx + m.s429 === 0, `${name}: no 5xx and no 429 (${m.s5xx} 5xx, ${m.s429} 429)`);
  for (const [name, m] of [
    ['GET /leaderboards', r.lb],
    ['GET /agents/{handle}/reputation', r.rep],
  ] as const)
    if (m) need(m.rps / r.bare.rps >= 0.6, `${name} >= 0.6 of bare (${(m.rps / r.bare.rps).toFixed(2)})`);
  return missed;
}

const PROF = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF] : [];
const ENTRY = [
  ...PROF,
  ...(USE_DIST ? [path.join(ROOT, 'dist/src/server.js')] : ['-r', 'tsx/cjs', path.join(ROOT, 'src/server.ts')]),
];

/** The service's environment as deployed, on database `url`, listening on `port`. */
function serviceEnv(url: string, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: url,
    REDIS_URL: REDIS,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SESSION_SECRET: 'bench-session-secret-0123456789abcdef0123456789',
    LOG_LEVEL: LOG_LEVEL,
    PGAPPNAME: WEB_APP,
  };
}

/** application_name of each process's PostgreSQL connections (node-postgres reads PGAPPNAME). */
const WEB_APP = 'svc-bench-web';
const WORKER_APP = 'svc-bench-worker';
/** Backends of the worker's connections, by pid, from pg_stat_activity (refreshed before each CPU reading). */
const workerBackends = new Set<number>();
let backendsDb: Knex | null = null;
async function refreshWorkerBackends(): Promise<void> {
  if (!backendsDb) return;
  const r = await backendsDb.raw('select pid from pg_stat_activity where application_name = ?', [WORKER_APP]);
  for (const row of r.rows) workerBackends.add(row.pid);
}

/**
 * One service on its database: the web process and, as deployed (Procfile: web + worker), the
 * worker, which runs the debounced scoring job that every write schedules, and the event fan-out.
 * `logFd`: JSON request logs at info, written to a file as a log collector would read them.
 */
async function startService(env: NodeJS.ProcessEnv, logFd: number) {
  const server = await startChild(ENTRY, env, Number(env.PORT), logFd);
  const worker = spawn(
    process.execPath,
    USE_DIST ? [path.join(ROOT, 'dist/src/worker.js')] : ['-r', 'tsx/cjs', path.join(ROOT, 'src/worker.ts')],
    { cwd: ROOT, env: { ...env, PGAPPNAME: WORKER_APP }, stdio: ['ignore', logFd, 'inherit'] },
  );
  return { server, worker, env };
}

/**
 * Activity for scoring, then one recompute so leaderboard and reputation reads serve real
 * snapshots, then the worker's queue drained. Returns the communities' slugs and the writer used.
 */
async function prime(env: NodeJS.ProcessEnv, s: Seeded): Promise<{ slugs: string[]; w: Writer }> {
  const base = `http://127.0.0.1:${env.PORT}`;
  const slugs = ((await (await fetch(`${base}/api/v1/communities`)).json()) as any).data.map((c: any) => c.slug);
  const w = new Writer(s.agents, s.posts, slugs, s.authorOf, s.ownerOf);
  for (let i = 0; i < 400; i++) {
    const rq = w.request();
    if (rq) await fetch(`${base}${rq.path}`, { method: rq.method, headers: rq.headers, body: rq.body });
  }
  for (const cmd of ['recompute-reputation', 'recompute-leaderboards']) {
    const r = spawnSync(
      process.execPath,
      [...(USE_DIST ? [path.join(ROOT, 'dist/src/cli.js')] : ['-r', 'tsx/cjs', path.join(ROOT, 'src/cli.ts')]), cmd],
      { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 },
    );
    console.log(`${cmd}: exit ${r.status}${r.status ? ' ' + (r.stderr || r.stdout).slice(0, 300) : ''}`);
  }
  console.log(await drainJobs(env.DATABASE_URL!));
  return { slugs, w };
}

async function main() {
  const pair = REPLICA ? await startPgReplicaPair() : null;
  if (pair) ADMIN = pair.primaryUrl.replace(/\/svc$/, '/postgres');
  const name = `svc_bench_load_${Date.now().toString(36)}`;
  /** --size both: the large data set's database, beside `name` (today's). */
  const bigName = BOTH ? `${name}_large` : null;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  backendsDb = admin;
  await admin.raw(`create database "${name}"`);
  const url = dbUrl(name);
  const children: ChildProcess[] = [];
  const logFile = path.join(os.tmpdir(), `${name}.log`);
  try {
    const seeded = LARGE ? await seedLargeRun(admin, name) : await seed(url);
    const { agents, posts, authorOf, ownerOf } = seeded;
    console.log(seeded.summary);
    const bigSeeded = bigName ? await seedLargeRun(admin, bigName) : null;
    if (bigSeeded) console.log(`large: ${bigSeeded.summary}`);
    const port = await freePort();
    const env = serviceEnv(url, port);
    const logFd = fs.openSync(logFile, 'w');
    const { server, worker } = await startService(env, logFd);
    // Stopped at the end even when a later start fails.
    children.push(server, worker);
    const big = bigName ? await startService(serviceEnv(dbUrl(bigName), await freePort()), logFd) : null;
    if (big) children.push(big.server, big.worker);
    // --replica: a second web process, its lag-tolerant reads on the replica.
    const replicaPort = pair ? await freePort() : 0;
    const replicaServer = pair
      ? await startChild(
          ENTRY,
          {
            ...env,
            PORT: String(replicaPort),
            PUBLIC_URL: `http://127.0.0.1:${replicaPort}`,
            DATABASE_READ_URL: pair.replicaUrl.replace(/\/svc$/, `/${name}`),
          },
          replicaPort,
          logFd,
        )
      : null;
    // --ab: the other tree's web process on the same database (this tree's worker serves both).
    const abPort = AB_DIR ? await freePort() : 0;
    const abServer = AB_DIR
      ? await startChild(
          [...PROF, path.join(AB_DIR, 'dist/src/server.js')],
          { ...env, PORT: String(abPort), PUBLIC_URL: `http://127.0.0.1:${abPort}` },
          abPort,
          logFd,
          AB_DIR,
        )
      : null;
    fs.closeSync(logFd);
    children.push(...(replicaServer ? [replicaServer] : []), ...(abServer ? [abServer] : []));
    if (big) {
      // Which process is which size's, for per-process tools (bench/lib/count-statements.cjs's files).
      console.log(
        `pids: today web ${server.pid}, worker ${worker.pid}; large web ${big.server.pid}, worker ${big.worker.pid}`,
      );
    }
    const barePids: number[] = [];
    const floorPids: number[] = [];
    classify = svcClassifier({
      web: () => [
        server.pid!,
        ...(replicaServer ? [replicaServer.pid!] : []),
        ...(abServer ? [abServer.pid!] : []),
        ...floorPids,
      ],
      worker: () => [worker.pid!],
      bare: () => barePids,
      database: name,
      workerBackends: () => workerBackends,
    });
    // --size both: the large service's processes, counted in its own rounds only.
    const bigClassify = big
      ? svcClassifier({
          web: () => [big.server.pid!],
          worker: () => [big.worker.pid!],
          bare: () => [],
          database: bigName!,
          workerBackends: () => workerBackends,
        })
      : null;
    const { slugs, w } = await prime(env, seeded);
    const bigMix = big && bigSeeded ? await prime(big.env, bigSeeded) : null;
    if (process.argv.includes('--hold')) {
      // Profiling: leave the seeded server running and print what a load generator needs.
      const file = path.join(os.tmpdir(), 'svc-load-hold.json');
      fs.writeFileSync(
        file,
        JSON.stringify({
          port,
          ...(replicaServer ? { replicaPort } : {}),
          url,
          database: name,
          pids: { web: server.pid, worker: worker.pid },
          agents,
          posts,
          slugs,
          ...(big && bigSeeded
            ? {
                large: {
                  port: Number(big.env.PORT),
                  url: big.env.DATABASE_URL,
                  database: bigName,
                  pids: { web: big.server.pid, worker: big.worker.pid },
                  agents: bigSeeded.agents,
                  posts: bigSeeded.posts,
                },
              }
            : {}),
        }),
      );
      console.log(
        `server on port ${port}, database ${url}${big ? `; large: port ${big.env.PORT}, database ${bigName}` : ''}; agents, keys and posts in ${file}; Ctrl-C ends`,
      );
      await new Promise((r) => process.once('SIGINT', r));
      return;
    }
    const barePort = await freePort();
    const bareChild = await startChild(['-e', BARE], { ...process.env, PORT: String(barePort) }, barePort);
    children.push(bareChild);
    barePids.push(bareChild.pid!);

    const read = reads(agents, posts);
    // A write whose kind has no agent free (its per-agent limits) becomes a read: counted, so the
    // share of writes actually sent is printed beside the figures (20 % is the workload's claim).
    /** Requests that are writes with probability `share` (a read when no agent is free), counting the writes sent. */
    const withWrites = (share: number, writer = w, reader = read) => {
      const sent = { writes: 0, all: 0 };
      const next = () => {
        sent.all++;
        const wr = Math.random() < share ? writer.request() : null;
        if (wr) sent.writes++;
        return wr ?? reader();
      };
      return { sent, next };
    };
    // --replica, --ab: the two web processes' mixes write as disjoint halves of the agents (shared limits).
    const half = Math.floor(agents.length / 2);
    const { sent, next: mixed } = withWrites(
      WRITE_SHARE,
      pair || abServer ? new Writer(agents.slice(0, half), posts, slugs, authorOf, ownerOf) : w,
    );
    const otherHalf = withWrites(WRITE_SHARE, new Writer(agents.slice(half), posts, slugs, authorOf, ownerOf));
    // One writer for every share: the agents' limits hold across them.
    const shareMixes = EXTRA_SHARES.map((share) => ({ share, ...withWrites(share), runs: [] as Result[] }));
    const bigMixed =
      bigMix && bigSeeded ? withWrites(WRITE_SHARE, bigMix.w, reads(bigSeeded.agents, bigSeeded.posts)) : null;
    // The floors answer far faster than the server: each schedule gets enough (unchecked) agents
    // that a write finds one free, so it too sends its share of writes.
    const floorAgents = Array.from({ length: 8000 }, (_, i) => ({
      id: `floor-${i}`,
      handle: `floor_${i}`,
      key: 'unchecked',
    }));
    const floors = [
      { name: 'floor', label: 'floor of the mix: reads from memory, each write one INSERT', env: {} },
      {
        name: 'floor-limited',
        label: 'floor + one Redis round trip per write (a shared limit)',
        env: { LIMIT_REDIS: REDIS },
      },
      { name: 'floor-reads', label: 'floor + one query per post, comments or profile read', env: { READ_ROWS: '1' } },
      {
        name: 'floor-contract',
        label: "floor-reads + Redis per write + each write's counter in its statement + reads' rows as JSON",
        env: { READ_ROWS: '1', LIMIT_REDIS: REDIS, CONTRACT: '1' },
      },
    ]
      .filter((f) => ONLY.includes(f.name))
      .map((f) => ({
        ...f,
        port: 0,
        runs: [] as Result[],
        ...withWrites(WRITE_SHARE, new Writer(floorAgents, posts, slugs, authorOf, ownerOf)),
      }));
    if (floors.length) {
      const fdb = createDb(url, 1);
      await fdb.raw(
        'create table bench_floor_writes (id bigserial primary key, path text not null, body text not null, created_at timestamptz not null default now())',
      );
      await fdb.raw('create table bench_floor_counts (key text primary key, n bigint not null)');
      await fdb.destroy();
    }
    for (const f of floors) {
      f.port = await freePort();
      const child = await startChild(
        ['-e', FLOOR],
        { ...process.env, ...f.env, PORT: String(f.port), DATABASE_URL: url, READ_BYTES: String(FLOOR_READ_BYTES) },
        f.port,
      );
      children.push(child);
      floorPids.push(child.pid!);
    }
    const cats = ['overall', 'helpful', 'funny', 'debater', 'rising', 'savage'];
    const lb = () => ({
      method: 'GET',
      path: `/api/v1/leaderboards?category=${cats[Math.floor(Math.random() * cats.length)]}`,
    });
    const rep = () => ({
      method: 'GET',
      path: `/api/v1/agents/${agents[Math.floor(Math.random() * agents.length)].handle}/reputation`,
    });
    const bareReq = () => ({ method: 'GET', path: '/' });

    // Warm-up (WARMUP): the servers serve their mix (reads alone unless the mix is measured), the floors theirs.
    await measure(barePort, bareReq, 2);
    const warm = ONLY.includes('mixed') ? WARMUP : 2;
    await measure(port, ONLY.includes('mixed') ? mixed : read, warm);
    if (replicaServer) await measure(replicaPort, ONLY.includes('mixed') ? otherHalf.next : read, warm);
    if (abServer) await measure(abPort, ONLY.includes('mixed') ? otherHalf.next : read, warm);
    const bigPort = Number(big?.env.PORT);
    if (bigMixed)
      await measure(
        bigPort,
        ONLY.includes('mixed') ? bigMixed.next : reads(bigSeeded!.agents, bigSeeded!.posts),
        warm,
        bigClassify!,
      );
    for (const f of floors) await measure(f.port, f.next, 2);
    // Interleaved rounds (bare, mixed, leaderboards, reputation, then again): load from other
    // processes on the shared machine falls on the baseline and the app alike.
    const runs: Record<
      'bare' | 'mixed' | 'mixedLarge' | 'mixedReplica' | 'mixedAb' | 'lb' | 'lbAb' | 'rep' | 'repAb' | 'writes',
      Result[]
    > = {
      bare: [],
      mixed: [],
      mixedLarge: [],
      mixedReplica: [],
      mixedAb: [],
      lbAb: [],
      repAb: [],
      lb: [],
      rep: [],
      writes: [],
    };
    const { sent: sentAlone, next: writesOnly } = withWrites(1);
    const slice = SECONDS / ROUNDS;
    // --size both: each size's worker over the rounds and the drain after them (its debounced
    // scoring of one round's writes runs partly in the next round, whoever that round measures).
    const workerStart = bigClassify ? [readCpu(classify), readCpu(bigClassify)] : null;
    for (let i = 0; i < ROUNDS; i++) {
      runs.bare.push(await measure(barePort, bareReq, slice));
      // --ab: the other tree's mix first in odd rounds, so neither side always follows the same workload.
      const ab = async () => {
        if (ONLY.includes('mixed') && abServer) runs.mixedAb.push(await measure(abPort, otherHalf.next, slice));
      };
      const small = async () => {
        if (i % 2 === 1) await ab();
        if (ONLY.includes('mixed')) runs.mixed.push(await measure(port, mixed, slice));
        if (ONLY.includes('mixed')) for (const m of shareMixes) m.runs.push(await measure(port, m.next, slice));
        if (i % 2 === 0) await ab();
        if (ONLY.includes('mixed') && replicaServer)
          runs.mixedReplica.push(await measure(replicaPort, otherHalf.next, slice));
        // --ab: the other tree's leaderboard and reputation reads after this tree's in even rounds, before in odd ones.
        for (const [kind, next] of [
          ['lb', lb],
          ['rep', rep],
        ] as const) {
          if (!ONLY.includes(kind)) continue;
          const other = abServer ? async () => runs[`${kind}Ab`].push(await measure(abPort, next, slice)) : null;
          if (i % 2 === 1) await other?.();
          runs[kind].push(await measure(port, next, slice));
          if (i % 2 === 0) await other?.();
        }
        if (ONLY.includes('writes')) runs.writes.push(await measure(port, writesOnly, slice));
      };
      const large = async () => {
        if (ONLY.includes('mixed') && bigMixed)
          runs.mixedLarge.push(await measure(bigPort, bigMixed.next, slice, bigClassify!));
      };
      const floorRound = async () => {
        for (const f of floors) f.runs.push(await measure(f.port, f.next, slice));
      };
      // --size both: the order rotates each round, so no size always follows the same workload.
      const order = bigMixed ? [small, large, floorRound] : [small, floorRound];
      for (let k = 0; k < order.length; k++) await order[(k + (bigMixed ? i : 0)) % order.length]();
    }
    let workerUs: number[] = [];
    if (workerStart && bigClassify) {
      console.log(`today: ${await drainJobs(url)}; large: ${await drainJobs(big!.env.DATABASE_URL!)}`);
      workerUs = [spent(workerStart[0], readCpu(classify)), spent(workerStart[1], readCpu(bigClassify))].map((u, k) => {
        const w = u.byRole.get('worker');
        return (1000 * ((w?.user ?? 0) + (w?.sys ?? 0))) / Math.max(1, combine(k ? runs.mixedLarge : runs.mixed).total);
      });
    }
    const [bare, mix, lbr, repr, writesAlone] = [
      combine(runs.bare),
      combine(runs.mixed),
      combine(runs.lb),
      combine(runs.rep),
      combine(runs.writes),
    ];

    const row = (label: string, m: Result, target: string) =>
      `| ${label} | ${m.bytes} | ${m.total} | ${Math.round(m.rps)} | ${m.p50} | ${m.p99} | ${m.p999} | ${((100 * (m.non2xx + m.errors)) / Math.max(1, m.total)).toFixed(2)}% | ${m.s429} | ${m.s5xx} | ${(m.rps / bare.rps).toFixed(2)} | ${target} |`;
    const logText = fs.readFileSync(logFile, 'utf8');
    const logLines = logText.split('\n').length - 1;
    console.log(
      `\n${LARGE ? `--size large (${POPULATION} agents, ${VOTES} votes), mix as ${AGENTS} of them` : `${AGENTS} agents`}, ${POSTS} posts${BOTH ? ` and --size both's large data set (${POPULATION} agents, ${LARGE_OPTS.posts} posts, ${VOTES} votes; mix as ${AGENTS} of them)` : ''}, ${CONNECTIONS} connections, ${SECONDS} s per workload in ${ROUNDS} interleaved rounds, server ${USE_DIST ? 'dist/src/server.js' : 'src/server.ts (tsx)'} (NODE_ENV=production, LOG_LEVEL=${LOG_LEVEL}: ${logLines} log lines written)\n`,
    );
    console.log(
      '| workload | bytes/response | requests | req/s | p50 ms | p99 ms | p99.9 ms | error rate | 429 | 5xx | ratio to bare | target |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    console.log(row('bare Koa route (baseline, own process)', bare, '-'));
    const pct = Math.round(WRITE_SHARE * 100);
    if (ONLY.includes('mixed'))
      console.log(
        row(
          `mixed: ${100 - pct}% reads, ${pct}% writes${replicaServer ? ' (reads on the primary)' : ''}`,
          mix,
          WRITE_SHARE === 0.2 ? '>= 0.6 of floor-reads' : '(not the workload)',
        ),
      );
    const mixReplica = replicaServer && ONLY.includes('mixed') ? combine(runs.mixedReplica) : null;
    if (mixReplica)
      console.log(
        row(`mixed, lag-tolerant reads on the streaming replica`, mixReplica, '(compare: reads on the primary)'),
      );
    const mixAb = abServer && ONLY.includes('mixed') ? combine(runs.mixedAb) : null;
    if (mixAb) console.log(row(`mixed on ${AB_DIR}`, mixAb, '(compare: this tree)'));
    const mixLarge = bigMixed && ONLY.includes('mixed') ? combine(runs.mixedLarge) : null;
    if (mixLarge) console.log(row(`mixed, large data set (${LARGE_OPTS.posts} posts)`, mixLarge, '(compare: today)'));
    if (ONLY.includes('lb')) console.log(row('GET /leaderboards (6 categories)', lbr, '>= 0.6'));
    const lbAb = abServer && ONLY.includes('lb') ? combine(runs.lbAb) : null;
    if (lbAb) console.log(row(`GET /leaderboards on ${AB_DIR}`, lbAb, '(compare: this tree)'));
    if (ONLY.includes('rep')) console.log(row('GET /agents/{handle}/reputation', repr, '>= 0.6'));
    const repAb = abServer && ONLY.includes('rep') ? combine(runs.repAb) : null;
    if (repAb) console.log(row(`GET /agents/{handle}/reputation on ${AB_DIR}`, repAb, '(compare: this tree)'));
    if (ONLY.includes('writes')) console.log(row('writes alone (a read when no agent is free)', writesAlone, ''));
    for (const f of floors) console.log(row(f.label, combine(f.runs), '(no server does less)'));
    // The figure compared between data sizes: both are measured in this run, so the machine cancels out.
    const floorReads = floors.find((f) => f.name === 'floor-reads');
    if (ONLY.includes('mixed') && floorReads)
      console.log(`\nmixed / floor-reads: ${(mix.rps / combine(floorReads.runs).rps).toFixed(3)}`);
    const floorContract = floors.find((f) => f.name === 'floor-contract');
    if (floorContract && floorReads) {
      const fc = combine(floorContract.runs);
      const fr = combine(floorReads.runs);
      const per = (r: Result, role: SvcRole) => cpuPerRequest(r, role) / Math.max(1e-9, cpuPerRequest(fr, role));
      console.log(
        `floor-contract / floor-reads: ${(fc.rps / fr.rps).toFixed(3)} (CPU per request: web ${per(fc, 'web').toFixed(2)}x, PostgreSQL ${per(fc, 'pg').toFixed(2)}x)`,
      );
      if (ONLY.includes('mixed')) console.log(`mixed / floor-contract: ${(mix.rps / fc.rps).toFixed(3)}`);
    }
    if (mixAb && floorReads)
      console.log(`mixed on ${AB_DIR} / floor-reads: ${(mixAb.rps / combine(floorReads.runs).rps).toFixed(3)}`);
    if (mixLarge) {
      if (floorReads)
        console.log(`mixed, large / floor-reads: ${(mixLarge.rps / combine(floorReads.runs).rps).toFixed(3)}`);
      // Per round too: how far one round's figure strays is what a single back-to-back pair could not show.
      const perRound = runs.mixedLarge.map((m, k) => (m.rps / runs.mixed[k].rps).toFixed(2)).join(', ');
      console.log(`large / today: ${(mixLarge.rps / mix.rps).toFixed(3)} (rounds: ${perRound})`);
      console.log(
        `worker CPU per mixed request over the rounds and the drain after: today ${workerUs[0].toFixed(0)} µs, large ${workerUs[1].toFixed(0)} µs`,
      );
    }
    const measured: [string, Result][] = [['bare Koa route', bare]];
    if (ONLY.includes('mixed')) measured.push(['mixed', mix]);
    if (mixReplica) measured.push(['mixed, reads on the replica', mixReplica]);
    if (mixAb) measured.push([`mixed on ${AB_DIR}`, mixAb]);
    if (mixLarge) measured.push(['mixed, large', mixLarge]);
    if (ONLY.includes('lb')) measured.push(['GET /leaderboards', lbr]);
    if (lbAb) measured.push([`GET /leaderboards on ${AB_DIR}`, lbAb]);
    if (ONLY.includes('rep')) measured.push(['GET /agents/{handle}/reputation', repr]);
    if (repAb) measured.push([`GET /agents/{handle}/reputation on ${AB_DIR}`, repAb]);
    if (ONLY.includes('writes')) measured.push(['writes alone', writesAlone]);
    for (const f of floors) measured.push([f.name, combine(f.runs)]);
    if (ONLY.includes('mixed')) {
      const share = (100 * sent.writes) / Math.max(1, sent.all);
      console.log(
        `\nmixed: ${sent.writes} of ${sent.all} requests sent (warm-up included) were writes (${share.toFixed(1)} %)${share < pct - 1 ? `: below ${pct} %, too few agents free for this rate (raise --agents)` : ''}`,
      );
    }
    if (shareMixes.length > 0)
      printShareFit(
        [
          { share: sent.writes / Math.max(1, sent.all), result: mix },
          ...shareMixes.map((m) => ({ share: m.sent.writes / Math.max(1, m.sent.all), result: combine(m.runs) })),
        ],
        floorReads ? combine(floorReads.runs) : null,
      );
    if (mixReplica || mixAb)
      console.log(
        `mixed on the ${mixAb ? 'other tree' : "replica's"} web process: ${otherHalf.sent.writes} of ${otherHalf.sent.all} requests sent (warm-up included) were writes (${((100 * otherHalf.sent.writes) / Math.max(1, otherHalf.sent.all)).toFixed(1)} %)`,
      );
    if (mixLarge && bigMixed)
      console.log(
        `mixed, large: ${bigMixed.sent.writes} of ${bigMixed.sent.all} requests sent (warm-up included) were writes (${((100 * bigMixed.sent.writes) / Math.max(1, bigMixed.sent.all)).toFixed(1)} %)`,
      );
    for (const f of floors)
      console.log(
        `${f.name}: ${f.sent.writes} of ${f.sent.all} requests sent (warm-up included) were writes (${((100 * f.sent.writes) / Math.max(1, f.sent.all)).toFixed(1)} %)`,
      );
    if (ONLY.includes('writes'))
      console.log(
        `writes alone: ${sentAlone.writes} of ${sentAlone.all} requests sent (warm-up included) were writes (the agents' limits cap the rate; the rest were reads)`,
      );
    if (BREAKDOWN) {
      // Each part alone, for profiling (short runs; writes keep to the same client-side schedule),
      // once the worker has run what the writes before scheduled: its scoring run's PostgreSQL
      // backends would otherwise count as the reads' (a post read: 153 µs of PostgreSQL CPU beside it, 44-48 alone).
      console.log(`\nbefore the parts alone: ${await drainJobs(url)}`);
      console.log(
        '\n| part (alone) | bytes/response | requests | req/s | p50 ms | p99 ms | p99.9 ms | error rate | 429 | 5xx | ratio to bare | |',
      );
      console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
      for (const [, label, req] of readKinds(agents, posts)) {
        const m = await measure(port, req, Math.max(3, SECONDS / 3));
        console.log(row(label, m, ''));
        measured.push([`${label} (alone)`, m]);
      }
      const writes = await measure(
        port,
        () => w.request() ?? { method: 'GET', path: '/api/v1/feed?sort=hot' },
        Math.max(3, SECONDS / 3),
      );
      console.log(row('writes (feed read when no agent is free)', writes, ''));
      measured.push(['writes (alone)', writes]);
    }
    if (procAvailable) {
      console.log(
        "\n| CPU per request (µs), by process | web | PostgreSQL (the worker's connections) | worker | Redis | load generator | bare route | total | cores busy | machine idle |",
      );
      console.log('|---|---|---|---|---|---|---|---|---|---|');
      for (const [label, m] of measured) console.log(cpuRow(label, m));
      // A fresh process still compiles hot code after --warmup (V8's compiler threads: 11-15 % of the
      // web process's CPU in a 12-s run, 3-5 % a minute on): rounds show whether a ratio is warm-up.
      const byRound = (parts: Result[]) => parts.map((m) => cpuPerRequest(m, 'web').toFixed(0)).join(', ');
      if (runs.mixed.length > 1) console.log(`\nweb µs per mixed request by round: ${byRound(runs.mixed)}`);
      if (floorReads && floorReads.runs.length > 1)
        console.log(`web µs per floor-reads request by round: ${byRound(floorReads.runs)}`);
    }
    // The error column's answers, by route and status, from the server's request log.
    const failed = new Map<string, number>();
    for (const m of logText.matchAll(/"method":"(\w+)","path":"([^"]*)","status":([45]\d\d)/g)) {
      const route = `${m[1]} ${m[2].replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id').replace(/^\/api\/v1\/agents\/[^/]+/, '/api/v1/agents/:handle')} ${m[3]}`;
      failed.set(route, (failed.get(route) ?? 0) + 1);
    }
    if (failed.size)
      console.log(
        `\nanswers over 399 (all workloads, server log): ${[...failed].map(([k, n]) => `${k} ×${n}`).join('; ')}`,
      );
    const missed = targetsMissed({
      mix: ONLY.includes('mixed') ? mix : null,
      floorReads: floorReads ? combine(floorReads.runs) : null,
      bare,
      lb: ONLY.includes('lb') ? lbr : null,
      rep: ONLY.includes('rep') ? repr : null,
    });
    for (const m of missed) console.log(`missed: ${m}`);
    const ok = missed.length === 0;
    console.log(`\n${ok ? 'all targets met' : 'TARGETS MISSED'}`);
    process.exitCode = ok ? 0 : 2;
  } finally {
    // The children stop before their database is dropped (a worker whose connections were
    // force-dropped under it logs a crash that is the bench's doing).
    await stopChildren(children);
    fs.rmSync(logFile, { force: true });
    for (const db of bigName ? [name, bigName] : [name])
      if (process.argv.includes('--keep')) console.log(`kept database ${db}`);
      else await admin.raw(`drop database if exists "${db}" with (force)`);
    await admin.destroy();
    await pair?.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
