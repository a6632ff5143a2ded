/**
 * Feed read throughput: GET /api/v1/feed?sort=hot against a freshly seeded database (tens of
 * thousands of posts), measured with autocannon against the real app in a child process, as a
 * ratio to a bare Koa route measured the same way in the same run; the app is measured as
 * deployed (feed micro-cache on) and with the micro-cache off.
 *
 *   npx tsx bench/feed.ts [--posts 30000] [--seconds 10] [--connections 16]
 *
 * Uses the machine's PostgreSQL (BENCH_ADMIN_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 * and Redis (REDIS_URL, default redis://127.0.0.1:6379); the bench database is dropped at the end.
 */
import { spawnFeedServer } from './lib/spawn-feed-server';
import knexFactory from 'knex';
import autocannon from 'autocannon';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { numberArg } from './lib/args';
import { seedFeedPosts } from './lib/feed-seed';

const POSTS = numberArg('posts', 30_000);
const SECONDS = numberArg('seconds', 10);
const CONNECTIONS = numberArg('connections', 16);
type Mode = 'bare' | 'feed' | 'feed-nocache';
const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

function dbUrl(name: string): string {
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  return u.toString();
}

async function seed(url: string) {
  const db = createDb(url, 2);
  await migrateAll(db, url);
  console.log(await seedFeedPosts(db, POSTS));
  await db.destroy();
}

function startServer(mode: Mode, url: string, extra: string[] = []) {
  return spawnFeedServer({ url, mode, extra });
}

async function measure(url: string, seconds: number) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50, total: r.requests.total };
}

async function run(mode: Mode, dbURL: string, pathAndQuery: string, extra: string[] = []) {
  const { child, port } = await startServer(mode, dbURL, extra);
  try {
    const url = `http://127.0.0.1:${port}${pathAndQuery}`;
    const bytes = (await (await fetch(url)).arrayBuffer()).byteLength;
    await measure(url, 2); // warm-up: JIT, pool connections, PostgreSQL caches
    return { ...(await measure(url, SECONDS)), bytes };
  } finally {
    child.kill('SIGTERM');
  }
}

async function main() {
  const name = `svc_bench_feed_${Date.now().toString(36)}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const url = dbUrl(name);
  try {
    await seed(url);
    const feed = await run('feed', url, '/api/v1/feed?sort=hot');
    const nocache = await run('feed-nocache', url, '/api/v1/feed?sort=hot');
    const bare = await run('bare', url, '/');
    const bareSame = await run('bare', url, '/', [String(feed.bytes)]);
    type M = { rps: number; p50: number; p99: number; total: number; bytes: number };
    const row = (label: string, m: M) =>
      `| ${label} | ${m.bytes} | ${m.total} | ${Math.round(m.rps)} | ${m.p50} | ${m.p99} | ${(m.rps / bare.rps).toFixed(2)} | ${(m.rps / bareSame.rps).toFixed(2)} |`;
    console.log(`\n${POSTS} posts, ${CONNECTIONS} connections, ${SECONDS} s per measurement\n`);
    console.log(
      '| route | body bytes | requests | req/s | p50 ms | p99 ms | ratio to bare | ratio to bare, same body size |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(row('bare Koa route, small body (baseline)', bare));
    console.log(row('bare Koa route, static body of the feed page size (baseline)', bareSame));
    console.log(row('GET /api/v1/feed?sort=hot (20 items)', feed));
    console.log(row('same, micro-cache off (every request queries PostgreSQL)', nocache));
    console.log(
      `\nfeed/bare ${(feed.rps / bare.rps).toFixed(2)}, feed/bare-same-size ${(feed.rps / bareSame.rps).toFixed(2)} (target >= 0.35)`,
    );
  } finally {
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
