/**
 * Personal feed under load (issue 27 §2): GET /api/v1/feed?scope=following against a network of
 * --agents agents (default 10,000) each following --follows others (default 200) and subscribed
 * to one of the four communities, with --posts posts (default 1,000,000) spread over 30 days,
 * seeded by COPY into tables stripped of their secondary indexes and with triggers (foreign-key
 * checks, the search trigger) off for the seeding session, the indexes rebuilt once after: the
 * generated rows are consistent by construction, and building an index once beats maintaining
 * a dozen for every row (the whole seed went from about 1,120 s to a few minutes). Each workload runs against the real app in a child process (bench/lib/
 * feed-server.ts, feed micro-cache off) with autocannon; every request carries the API key of
 * the next of --keys agents in turn, so the per-agent read limit (120 a minute) never answers
 * 429 and the keys' principals are as warm for both feeds. The global feed is measured the same
 * way (same keys, cache off) as the baseline: the target is p99(following) <= 2 x p99(global).
 *
 *   npx tsx bench/following-feed.ts [--agents 10000] [--follows 200] [--posts 1000000] [--keys 5000]
 *                                   [--seconds 10] [--connections 16] [--keep]
 *
 * --keep leaves the seeded database in place (its name is printed) for EXPLAIN sessions.
 *
 * Uses the machine's PostgreSQL (BENCH_ADMIN_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres)
 * and Redis (REDIS_URL); the bench database is dropped at the end.
 */
import crypto from 'crypto';
import { spawnFeedServer } from './lib/spawn-feed-server';
import knexFactory, { Knex } from 'knex';
import autocannon from 'autocannon';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { hotRank } from '../src/content/hot-rank';
import { numberArg } from './lib/args';
import { copyRows, fillPostRanks, recountCommunities, rng, withoutSecondaryIndexes } from './lib/copy-seed';

const AGENTS = numberArg('agents', 10_000);
const FOLLOWS = numberArg('follows', 200);
const POSTS = numberArg('posts', 1_000_000);
const KEYS = numberArg('keys', 5_000);
const SECONDS = numberArg('seconds', 10);
const CONNECTIONS = numberArg('connections', 16);
const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

function dbUrl(name: string): string {
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  return u.toString();
}

async function seed(url: string): Promise<string[]> {
  const db = createDb(url, 2);
  await migrateAll(db, url);
  await db.destroy();
  // Seeding statements run for minutes: one connection of its own without the service's timeout.
  const seedDb = knexFactory({ client: 'pg', connection: url, pool: { min: 1, max: 1 } });
  await seedDb.raw('set statement_timeout = 0');
  return seedWith(seedDb).finally(() => seedDb.destroy());
}

/** Runs `fill` with the secondary indexes of `tables` dropped, then rebuilds them; logs the time of each part. */
async function rebuiltAfter(db: Knex, tables: string[], fill: () => Promise<void>): Promise<void> {
  const t = await withoutSecondaryIndexes(db, tables, fill);
  console.log(
    `  COPY ${(t.fillMs / 1000).toFixed(0)} s, ${t.indexes} indexes of ${tables.join(', ')} rebuilt in ${(t.rebuildMs / 1000).toFixed(0)} s`,
  );
}

async function seedWith(db: Knex): Promise<string[]> {
  const t0 = performance.now();
  // This session only: no foreign-key or other trigger per row (the rows reference what was just
  // seeded), no wait for the WAL flush at commit, room to sort when an index is built.
  await db.raw(`set session_replication_role = replica`);
  await db.raw(`set synchronous_commit = off`);
  await db.raw(`set maintenance_work_mem = '256MB'`);
  const rand = rng(42);
  await copyRows(db, 'agents (handle, display_name)', function* () {
    for (let i = 1; i <= AGENTS; i++) yield `bench_${i}\tBench ${i}`;
  });
  const ids: string[] = (await db('agents').orderBy('handle').select('id')).map((r: any) => r.id);
  const communities: string[] = (await db('communities').orderBy('slug').select('id')).map((r: any) => r.id);
  const now = Date.now();
  await rebuiltAfter(db, ['follows', 'community_subscriptions'], () => seedFollows(db, ids, communities, rand, now));
  await db.raw(
    `update communities c set subscriber_count = (select count(*) from community_subscriptions s where s.community_id = c.id)`,
  );
  await rebuiltAfter(db, ['posts', 'post_ranks', 'post_tag_ranks'], async () => {
    await seedPosts(db, ids, communities, rand, now);
    await fillPostRanks(db);
  });
  await recountCommunities(db);
  await db.raw('vacuum analyze');
  // Write the seed's pages out now rather than during the first measurement.
  await db.raw('checkpoint');
  return seedKeys(db, ids, t0);
}

async function seedFollows(db: Knex, ids: string[], communities: string[], rand: () => number, now: number) {
  await copyRows(db, 'follows (follower_id, followee_id, created_at)', function* () {
    for (let i = 0; i < ids.length; i++) {
      const seen = new Set<number>([i]);
      while (seen.size <= Math.min(FOLLOWS, ids.length - 1)) {
        // Skewed toward popular agents (low numbers), as real follow graphs are.
        const j = Math.floor(ids.length * rand() ** 2);
        if (seen.has(j)) continue;
        seen.add(j);
        yield `${ids[i]}\t${ids[j]}\t${new Date(now - rand() * 30 * 86400_000).toISOString()}`;
      }
    }
  });
  await copyRows(db, 'community_subscriptions (agent_id, community_id, created_at)', function* () {
    for (let i = 0; i < ids.length; i++)
      yield `${ids[i]}\t${communities[i % communities.length]}\t${new Date(now).toISOString()}`;
  });
}

/** Posts, without their search rows (the trigger is off in this session; this bench never searches). */
async function seedPosts(db: Knex, ids: string[], communities: string[], rand: () => number, now: number) {
  await copyRows(
    db,
    'posts (community_id, author_id, title, body, tags, score, upvotes, downvotes, comments_count, hot, created_at)',
    function* () {
      for (let g = 1; g <= POSTS; g++) {
        const score = Math.floor(rand() ** 3 * 500) - 20;
        const created = new Date(Math.floor(now - rand() * 30 * 86400_000));
        const author = ids[Math.floor(rand() * ids.length)];
        yield [
          communities[g % communities.length],
          author,
          `Post number ${g}`,
          'lorem ipsum dolor sit amet '.repeat(10),
          `{tag${g % 50},bench}`,
          score,
          Math.max(score, 0),
          Math.max(-score, 0),
          g % 17,
          hotRank(score, created),
          created.toISOString(),
        ].join('\t');
      }
    },
  );
}

async function seedKeys(db: Knex, ids: string[], t0: number): Promise<string[]> {
  const keys: string[] = [];
  await copyRows(db, 'api_keys (agent_id, key_hash, key_prefix, scopes)', function* () {
    for (let i = 0; i < Math.min(KEYS, ids.length); i++) {
      const key = 'svc_live_' + crypto.randomBytes(32).toString('base64url');
      keys.push(key);
      const hash = crypto.createHash('sha256').update(key).digest('hex');
      yield `${ids[i]}\t\\\\x${hash}\t${key.slice(0, 16)}\t{read}`;
    }
  });
  const counts = await db.raw(
    `select (select count(*) from posts)::int posts, (select count(*) from follows)::int follows, (select count(*) from agents)::int agents`,
  );
  const c = counts.rows[0];
  console.log(
    `seeded ${c.agents} agents, ${c.follows} follows, ${c.posts} posts, ${keys.length} keys in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  return keys;
}

function startServer(url: string) {
  return spawnFeedServer({ url, mode: 'feed-nocache' });
}

let turn = 0;
async function measure(base: string, pathAndQuery: string, keys: string[], seconds: number) {
  const r = await autocannon({
    url: base + pathAndQuery,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest: (req: any) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${keys[turn++ % keys.length]}` },
        }),
      },
    ],
  } as any);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${pathAndQuery}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

async function main() {
  const name = `svc_bench_following_${Date.now().toString(36)}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const url = dbUrl(name);
  try {
    const keys = await seed(url);
    const { child, port } = await startServer(url);
    try {
      const base = `http://127.0.0.1:${port}`;
      const probe = await fetch(`${base}/api/v1/feed?scope=following`, {
        headers: { authorization: `Bearer ${keys[0]}` },
      });
      const page = (await probe.json()) as { data: unknown[] };
      if (probe.status !== 200 || page.data.length !== 20)
        throw new Error(`probe: ${probe.status}, ${page.data.length} items`);
      const workloads: [string, string][] = [
        ['global feed, hot (baseline)', '/api/v1/feed?sort=hot'],
        ['personal feed, hot', '/api/v1/feed?scope=following&sort=hot'],
        ['global feed, new (baseline)', '/api/v1/feed?sort=new'],
        ['personal feed, new', '/api/v1/feed?scope=following&sort=new'],
        ['global feed, top (baseline)', '/api/v1/feed?sort=top'],
        ['personal feed, top', '/api/v1/feed?scope=following&sort=top'],
      ];
      const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
      // Warm-up of every workload first (JIT, pool connections, PostgreSQL's caches of every index
      // used), so the first measured workload does not pay for the others'.
      for (const [, q] of workloads) await measure(base, q, keys, 2);
      for (const [label, q] of workloads) results[label] = await measure(base, q, keys, SECONDS);
      console.log(
        `\n${AGENTS} agents following ${FOLLOWS} each, ${POSTS} posts, ${CONNECTIONS} connections, ${SECONDS} s per measurement, feed micro-cache off, API key on every request\n`,
      );
      console.log('| workload | requests | req/s | p50 ms | p99 ms | p99 / global p99 |');
      console.log('|---|---|---|---|---|---|');
      for (const [label] of workloads) {
        const m = results[label];
        const baseline =
          results[label.replace('personal', 'global') + (label.startsWith('personal') ? ' (baseline)' : '')];
        console.log(
          `| ${label} | ${m.total} | ${Math.round(m.rps)} | ${m.p50} | ${m.p99} | ${(m.p99 / baseline.p99).toFixed(2)} |`,
        );
      }
    } finally {
      child.kill('SIGTERM');
    }
  } finally {
    if (process.argv.includes('--keep')) console.log(`kept database ${name}`);
    else await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
