/**
 * What a post's search vector costs the writes that only move its counters (a vote: score and hot;
 * a reaction; a comment count), in PostgreSQL alone: two copies of the posts table in a scratch
 * database, one with the search vector on the row (generated column + GIN index, as before
 * sql/070_post_search_apart.ts) and one with it in a table of its own (as now), the same indexes
 * otherwise, the same posts; vote-like updates on random posts against each in turn.
 *
 *   npx tsx bench/post-counters.ts [--posts 5000] [--words 300] [--seconds 6] [--rounds 3] [--clients 4]
 *
 * --words: pseudo-random words per post body (0: one sentence repeated, 5 distinct words).
 * Prints updates/s of each shape per round and the ratio apart / on the row.
 */
import knexFactory, { Knex } from 'knex';
import { numberArg } from './lib/args';
import { seededBodySql } from './lib/bodies';

const POSTS = numberArg('posts', 5000);
const WORDS = numberArg('words', 300);
const SECONDS = numberArg('seconds', 6);
const ROUNDS = numberArg('rounds', 3);
const CLIENTS = numberArg('clients', 4);
const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const VECTOR = (t: string) =>
  `setweight(to_tsvector('english', ${t}title), 'A') || setweight(to_tsvector('english', array_to_string(${t}tags, ' ')), 'A') || setweight(to_tsvector('english', ${t}body), 'B')`;

async function setup(db: Knex): Promise<void> {
  const body = seededBodySql(WORDS);
  const columns = `id int primary key, community int not null, title text not null, body text not null, tags text[] not null,
    score int not null default 0, hot float8 not null, created_at timestamptz not null default now(), deleted_at timestamptz`;
  await db.raw(
    `create function tags_text(t text[]) returns text language sql immutable as $$ select array_to_string(t, ' ') $$`,
  );
  await db.raw(
    `create table on_row (${columns}, search tsvector generated always as (${VECTOR('').replace("array_to_string(tags, ' ')", 'tags_text(tags)')}) stored)`,
  );
  await db.raw(`create table apart (${columns})`);
  await db.raw(`create table apart_search (id int primary key references apart(id), search tsvector not null)`);
  for (const t of ['on_row', 'apart']) {
    await db.raw(
      `insert into ${t} (id, community, title, body, tags, hot) select g, g % 4, 'Post ' || g, ${body}, array['tag' || (g % 30), 'load'], random() from generate_series(1, ?) g`,
      [POSTS],
    );
    for (const idx of [
      '(community, hot desc, id desc)',
      '(hot desc, id desc)',
      '(created_at desc, id desc)',
      '(score desc, created_at desc, id desc)',
    ]) {
      await db.raw(`create index on ${t} ${idx} where deleted_at is null`);
    }
    await db.raw(`create index on ${t} using gin (tags) where deleted_at is null`);
  }
  await db.raw(`insert into apart_search select id, ${VECTOR('a.')} from apart a`);
  await db.raw('create index on on_row using gin (search)');
  await db.raw('create index on apart_search using gin (search)');
  await db.raw('vacuum analyze');
}

/** Vote-like updates (indexed score and hot: never HOT) on random posts for `seconds`; updates/s. */
async function run(db: Knex, table: string, seconds: number): Promise<number> {
  let n = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        await db.raw(`update ${table} set score = score + 1, hot = hot + 0.0001 where id = ?`, [
          1 + Math.floor(Math.random() * POSTS),
        ]);
        n++;
      }
    }),
  );
  return n / seconds;
}

async function main() {
  const name = `svc_bench_counters_${Date.now().toString(36)}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const db = knexFactory({ client: 'pg', connection: u.toString(), pool: { min: 0, max: CLIENTS } });
  try {
    await setup(db);
    const lexemes = (await db.raw('select avg(length(search))::int n, avg(length(body))::int b from on_row')).rows[0];
    console.log(
      `${POSTS} posts, bodies of ${lexemes.b} characters with ${lexemes.n} distinct lexemes on average; ${CLIENTS} clients, ${SECONDS} s per shape and round`,
    );
    await run(db, 'on_row', 1);
    await run(db, 'apart', 1);
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const a = await run(db, 'on_row', SECONDS);
      const b = await run(db, 'apart', SECONDS);
      ratios.push(b / a);
      console.log(
        `round ${r + 1}: vector on the row ${Math.round(a)} updates/s, apart ${Math.round(b)} updates/s, ratio ${(b / a).toFixed(2)}`,
      );
    }
    console.log(
      `median ratio apart / on the row: ${ratios.sort((x, y) => x - y)[Math.floor(ratios.length / 2)].toFixed(2)}`,
    );
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
