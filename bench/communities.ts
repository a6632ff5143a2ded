/**
 * GET /communities over a large data set: the listing from the counters kept per agent
 * (sql/114_community_counts.ts) against the same counts over every post and comment (what it
 * computed before), the counters' recount at that size (the migration's backfill), what a
 * deletion costs them, and what they cost a write: single-row inserts of posts and comments timed by
 * PostgreSQL (EXPLAIN ANALYZE: the statement, and the counters' trigger), with the triggers, then
 * without. A fresh database, seeded by COPY, dropped after.
 *
 *   npx tsx bench/communities.ts [--agents 100000] [--posts 1000000] [--comments 300000] [--inserts 2000]
 */
import knexFactory from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { listCommunities } from '../src/communities/service';
import * as migration from '../sql/114_community_counts';
import { copyRows, recountCommunities, rng, uuidOf, withoutSecondaryIndexes } from './lib/copy-seed';
import { countedFromRows } from './lib/community-counts';
import { numberArg } from './lib/args';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const AGENTS = numberArg('agents', 100_000);
const POSTS = numberArg('posts', 1_000_000);
const COMMENTS = numberArg('comments', 300_000);
const INSERTS = numberArg('inserts', 2000);
const DAY = 86_400_000;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function main() {
  const admin = knexFactory({ client: 'pg', connection: ADMIN });
  const name = `svc_bench_communities_${process.pid}`;
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const db = createDb(u.toString(), 1);
  try {
    await migrateAll(db, u.toString());
    const now = Date.now();
    const r = rng(7);
    const communities: string[] = (await db('communities').orderBy('slug').select('id')).map((c: any) => c.id);
    const agent = (i: number) => uuidOf(4101, i);
    const post = (g: number) => uuidOf(4102, g);
    const iso = (ms: number) => new Date(ms).toISOString();
    // This session only (the pool's one connection): the seed's bulk statements have no deadline.
    await db.raw(`set statement_timeout = 0`);
    await db.raw(`set session_replication_role = replica`);
    await db.raw(`set synchronous_commit = off`);
    const seed = await timed(() =>
      withoutSecondaryIndexes(db, ['agents', 'posts', 'comments'], async () => {
        await copyRows(db, 'agents (id, handle, display_name, created_at)', function* () {
          for (let i = 0; i < AGENTS; i++) yield `${agent(i)}\tcm_${i}\tC ${i}\t${iso(now - 200 * DAY)}`;
        });
        // Authors skewed toward a few prolific agents, posts over the last 60 days.
        await copyRows(db, 'posts (id, community_id, author_id, title, body, hot, created_at)', function* () {
          for (let g = 0; g < POSTS; g++)
            yield `${post(g)}\t${communities[g % communities.length]}\t${agent(Math.floor(AGENTS * r() ** 2))}\tp ${g}\tb\t0\t${iso(now - r() * 60 * DAY)}`;
        });
        await copyRows(db, 'comments (post_id, author_id, body, created_at)', function* () {
          for (let k = 0; k < COMMENTS; k++)
            yield `${post(Math.floor(r() * POSTS))}\t${agent(Math.floor(r() * AGENTS))}\tc\t${iso(now - r() * 60 * DAY)}`;
        });
      }),
    );
    const recount = await timed(() => recountCommunities(db));
    await db.raw(`set session_replication_role = origin`);
    await db.raw('vacuum analyze');
    const deletions = await timed(() => db.raw(`update posts set deleted_at = created_at where random() < 0.002`));
    await db.raw(`update agents set status = 'suspended' where random() < 0.01`);
    console.log(
      `${AGENTS} agents, ${POSTS} posts, ${COMMENTS} comments by COPY in ${(seed.ms / 1000).toFixed(0)} s; counters recounted in ${(recount.ms / 1000).toFixed(1)} s; ` +
        `0.2 % of posts deleted (${deletions.value.rowCount} in ${(deletions.ms / 1000).toFixed(1)} s, each moving its author and reading again its commenters' latest contribution), 1 % of agents suspended`,
    );

    const at = new Date(now);
    await listCommunities(db, at);
    const kept = await timed(() => listCommunities(db, at));
    const rows = await timed(() => countedFromRows(db, at));
    const same = rows.value.every((c, i) => {
      const k = kept.value[i];
      return k.slug === c.slug && k.postCount === c.postCount && k.activeAgentCount === c.activeAgentCount;
    });
    console.log(
      `GET /communities: ${kept.ms.toFixed(1)} ms from the counters, ${rows.ms.toFixed(0)} ms over the rows; ${same ? 'same counts' : 'COUNTS DIFFER'}`,
    );

    /** Median over INSERTS single-row inserts of posts, then of comments: statement and counters' trigger, µs. */
    const writes = async () => {
      const median = (xs: number[]) => xs.sort((x, y) => x - y)[xs.length >> 1] ?? 0;
      const explain = async (sql: string, values: string[], trigger: string) => {
        const plan: string[] = (await db.raw(`explain (analyze) ${sql}`, values)).rows.map((x: any) => x['QUERY PLAN']);
        const ms = (re: RegExp) => Number(plan.map((l) => re.exec(l)?.[1]).find((v) => v !== undefined) ?? 0);
        return {
          total: ms(/^Execution Time: ([\d.]+) ms/) * 1000,
          trigger: ms(new RegExp(`^Trigger ${trigger}: time=([\\d.]+)`)) * 1000,
        };
      };
      const out: Record<string, { total: number; trigger: number }> = {};
      for (const [what, sql, values, trigger] of [
        [
          'post',
          `insert into posts (community_id, author_id, title, body, hot) values (?, ?, 'w', 'w', 0)`,
          (i: number) => [communities[i % communities.length], agent(i % AGENTS)],
          'posts_community_insert',
        ],
        [
          'comment',
          `insert into comments (post_id, author_id, body) values (?, ?, 'w')`,
          (i: number) => [post(i), agent((i * 7) % AGENTS)],
          'comments_community_insert',
        ],
      ] as const) {
        const runs = [];
        for (let i = 0; i < INSERTS; i++) runs.push(await explain(sql, values(i), trigger));
        out[what] = { total: median(runs.map((r) => r.total)), trigger: median(runs.map((r) => r.trigger)) };
      }
      return out;
    };
    const first = await timed(() =>
      db('posts')
        .where({ id: post(1) })
        .update({ deleted_at: new Date() }),
    );
    const withCounters = await writes();
    await migration.down(db);
    const without = await writes();
    const backfill = await timed(() => migration.up(db));
    // Again with them: the order of the two runs is not what differs.
    const again = await writes();
    console.log(
      `a post's deletion (its author moved, its commenters' latest contribution read again): ${first.ms.toFixed(1)} ms`,
    );
    for (const what of ['post', 'comment'])
      console.log(
        `single-row ${what} insert (median of ${INSERTS}): ${withCounters[what].total.toFixed(0)} and ${again[what].total.toFixed(0)} µs with the counters ` +
          `(their trigger ${withCounters[what].trigger.toFixed(0)} and ${again[what].trigger.toFixed(0)} µs), ${without[what].total.toFixed(0)} µs without (between them)`,
      );
    console.log(`migration 114 at this size (triggers and backfill): ${(backfill.ms / 1000).toFixed(1)} s`);
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
