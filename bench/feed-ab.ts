/**
 * A/B of the uncached feed: two source trees (A, the baseline, e.g. a worktree of main's commit;
 * B, this tree) serve GET /api/v1/feed with the feed and response caches off (bench/lib/feed-server.ts
 * `feed-nocache` of each tree), over the same seeded data, measured in alternating rounds in one run.
 *
 *   npx tsx bench/feed-ab.ts --base /work/wt-base [--posts 30000] [--seconds 6] [--rounds 4] [--connections 16] [--cpu-prof DIR] [--b-socket /var/run/postgresql]
 *
 * Database A is migrated by tree A and seeded; database B is a copy of it (CREATE DATABASE ...
 * TEMPLATE) then migrated by this tree, so both hold the same rows and each has its own tree's
 * schema. Prints req/s, p99 and CPU per request (from /proc) of the server process, of the
 * PostgreSQL backends connected to its database (not other databases' work on a shared machine)
 * and of this process (the load generator) per tree and path, and B/A. Uses BENCH_ADMIN_DATABASE_URL and REDIS_URL as bench/feed.ts does.
 */
import type { ChildProcess } from 'child_process';
import { spawnFeedServer } from './lib/spawn-feed-server';
import fs from 'fs';
import path from 'path';
import knexFactory, { type Knex } from 'knex';
import autocannon from 'autocannon';
import { migrateAll } from '../src/db/migrate';
import { numberArg } from './lib/args';
import { seedFeedPosts } from './lib/feed-seed';

const POSTS = numberArg('posts', 30_000);
const SECONDS = numberArg('seconds', 6);
const ROUNDS = numberArg('rounds', 4);
const CONNECTIONS = numberArg('connections', 16);
const baseArg = process.argv.indexOf('--base');
const BASE = baseArg > 0 ? path.resolve(process.argv[baseArg + 1]) : '';
const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const PATHS = ['/api/v1/feed?sort=hot', '/api/v1/feed?sort=new', '/api/v1/feed?sort=top&tag=tag7'];

function dbUrl(name: string): string {
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  return u.toString();
}

const profArg = process.argv.indexOf('--cpu-prof');
/** `--cpu-prof DIR`: this tree's server writes a V8 CPU profile there when it stops. */
const PROF_DIR = profArg > 0 ? path.resolve(process.argv[profArg + 1]) : '';

const socketArg = process.argv.indexOf('--b-socket');
/** `--b-socket DIR`: tree B reaches PostgreSQL through its Unix socket in DIR instead of TCP. */
const B_SOCKET = socketArg > 0 ? process.argv[socketArg + 1] : '';

function startServer(tree: string, url: string, prof = '') {
  return spawnFeedServer({
    url,
    mode: 'feed-nocache',
    tree,
    nodeArgs: prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : [],
  });
}

/** utime + stime of a process in ms (USER_HZ 100). */
function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/**
 * CPU ms of the PostgreSQL backends connected to `database` (the tree's server's pool): other
 * PostgreSQL work on a shared machine (other databases) is left out, and so are the background
 * processes (walwriter, checkpointer...), which a read-only load hardly uses.
 */
async function pgCpu(admin: Knex, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.raw('select pid from pg_stat_activity where datname = ?', [database]);
  const ms = new Map<number, number>();
  for (const { pid } of rows as { pid: number }[]) {
    try {
      ms.set(pid, cpuMs(pid));
    } catch {
      // the backend ended
    }
  }
  return ms;
}

/** CPU spent since `before` by the backends alive now (one that started since counts from 0). */
async function pgSpent(admin: Knex, database: string, before: Map<number, number>): Promise<number> {
  let ms = 0;
  for (const [pid, now] of await pgCpu(admin, database)) ms += now - (before.get(pid) ?? 0);
  return ms;
}

async function measure(admin: Knex, database: string, url: string, seconds: number, pid: number) {
  const c0 = cpuMs(pid);
  const pg0 = await pgCpu(admin, database);
  const own0 = process.cpuUsage();
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds });
  const cpu = cpuMs(pid) - c0;
  const pg = await pgSpent(admin, database, pg0);
  const own = process.cpuUsage(own0);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { total: r.requests.total, p99: r.latency.p99, cpu, pg, load: (own.user + own.system) / 1000 };
}

async function main() {
  if (!BASE) throw new Error('--base <tree> is required');
  const stamp = Date.now().toString(36);
  const nameA = `svc_bench_feedab_a_${stamp}`;
  const nameB = `svc_bench_feedab_b_${stamp}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  const servers: ChildProcess[] = [];
  try {
    await admin.raw(`create database "${nameA}"`);
    const baseMigrate = (await import(path.join(BASE, 'src', 'db', 'migrate'))) as {
      migrateAll: (db: Knex, url: string) => Promise<void>;
    };
    const a = knexFactory({ client: 'pg', connection: dbUrl(nameA), pool: { min: 0, max: 2 } });
    await baseMigrate.migrateAll(a, dbUrl(nameA));
    console.log(await seedFeedPosts(a, POSTS));
    await a.destroy();
    await admin.raw(`create database "${nameB}" template "${nameA}"`);
    const b = knexFactory({ client: 'pg', connection: dbUrl(nameB), pool: { min: 0, max: 2 } });
    await migrateAll(b, dbUrl(nameB));
    await b.raw('analyze');
    await b.destroy();

    const trees = [
      { label: 'A (base)', tree: BASE, url: dbUrl(nameA), database: nameA },
      {
        label: 'B (this tree)',
        tree: path.resolve(__dirname, '..'),
        database: nameB,
        url: dbUrl(nameB) + (B_SOCKET ? `?host=${encodeURIComponent(B_SOCKET)}` : ''),
      },
    ];
    const started = [];
    for (const t of trees) {
      const s = await startServer(t.tree, t.url, t.tree === BASE ? '' : PROF_DIR);
      servers.push(s.child);
      started.push({ ...t, ...s });
    }
    for (const s of started)
      for (const p of PATHS) await measure(admin, s.database, `http://127.0.0.1:${s.port}${p}`, 2, s.child.pid!); // warm-up
    const sums = new Map<
      string,
      { total: number; cpu: number; pg: number; load: number; p99: number[]; secs: number }
    >();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? started : [...started].reverse();
      for (const p of PATHS)
        for (const s of order) {
          const m = await measure(admin, s.database, `http://127.0.0.1:${s.port}${p}`, SECONDS, s.child.pid!);
          const k = `${s.label}|${p}`;
          const acc = sums.get(k) ?? { total: 0, cpu: 0, pg: 0, load: 0, p99: [], secs: 0 };
          acc.total += m.total;
          acc.cpu += m.cpu;
          acc.pg += m.pg;
          acc.load += m.load;
          acc.p99.push(m.p99);
          acc.secs += SECONDS;
          sums.set(k, acc);
        }
    }
    console.log(
      `\n${POSTS} posts, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s per path\n`,
    );
    console.log(
      '| path | tree | req/s | p99 ms (median of rounds) | CPU µs/req: web | PostgreSQL | load generator | B/A req/s |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const p of PATHS) {
      const rps: number[] = [];
      for (const s of started) {
        const acc = sums.get(`${s.label}|${p}`)!;
        const us = (ms: number) => Math.round((ms * 1000) / acc.total);
        const r = acc.total / acc.secs;
        rps.push(r);
        const p99 = [...acc.p99].sort((x, y) => x - y)[Math.floor(acc.p99.length / 2)];
        const ratio = rps.length === 2 ? `**${(rps[1] / rps[0]).toFixed(2)}**` : '1.00';
        console.log(
          `| ${p} | ${s.label} | ${Math.round(r)} | ${p99} | ${us(acc.cpu)} | ${us(acc.pg)} | ${us(acc.load)} | ${ratio} |`,
        );
      }
    }
  } finally {
    for (const c of servers) c.kill('SIGTERM');
    await admin.raw(`drop database if exists "${nameB}" with (force)`);
    await admin.raw(`drop database if exists "${nameA}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
