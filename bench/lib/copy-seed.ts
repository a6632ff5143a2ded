import type { Knex } from 'knex';
import { Readable } from 'stream';
import { pipeline } from 'stream/promises';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * Seeding benchmark databases by COPY: rows made in Node from a seeded generator, streamed as
 * text COPY (one INSERT per row would take the seed from minutes to an hour at millions of rows).
 */

/** Text COPY null. */
export const NULL = '\\N';

/**
 * COPY of text rows (tab-separated; the caller makes sure no value needs escaping) made by `rows`,
 * sent in chunks of about 64 kB through one connection of `db`.
 */
export async function copyRows(db: Knex, into: string, rows: () => Iterable<string>): Promise<void> {
  // any: knex does not type its client's acquireConnection, the only way to its pg connection.
  const conn = await (db.client as any).acquireConnection();
  try {
    const lines = rows();
    const source = Readable.from(
      (function* () {
        let chunk = '';
        for (const line of lines) {
          chunk += line + '\n';
          if (chunk.length > 1 << 16) {
            yield chunk;
            chunk = '';
          }
        }
        if (chunk) yield chunk;
      })(),
    );
    await pipeline(source, conn.query(copyFrom(`copy ${into} from stdin`)));
  } finally {
    await (db.client as any).releaseConnection(conn);
  }
}

/** A deterministic generator of numbers in [0, 1), so every run with the same seed seeds the same rows. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** murmur3's 32-bit finalizer: a bijection of 32-bit integers that scatters neighbouring inputs. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/**
 * A version-4-shaped UUID for row `i` of one table, as scattered as gen_random_uuid()'s (index
 * locality like the real service's), the same on every run: its first 32 bits are a bijection of
 * `i`, so the rows of one table (i < 2^32) never collide. `salt` tells tables and seeds apart.
 */
export function uuidOf(salt: number, i: number): string {
  const a = fmix32((i + Math.imul(salt, 0x9e3779b9)) >>> 0);
  const b = (fmix32(a ^ 0x68e31da4) & 0xffff0fff) | 0x4000;
  const c = ((fmix32(a ^ 0xb5297a4d) & 0x3fffffff) | 0x80000000) >>> 0;
  const d = fmix32(a ^ 0x1b56c4e9);
  const bs = hex8(b >>> 0);
  const cs = hex8(c);
  return `${hex8(a)}-${bs.slice(0, 4)}-${bs.slice(4)}-${cs.slice(0, 4)}-${cs.slice(4)}${hex8(d)}`;
}

/**
 * Runs `fill` with the secondary indexes of `tables` dropped (primary keys and constraint indexes
 * stay), then builds them again, one pass each: building an index once beats maintaining a dozen
 * for every row. A unique index rebuilt this way also checks the seeded rows against it.
 */
export async function withoutSecondaryIndexes(
  db: Knex,
  tables: string[],
  fill: () => Promise<void>,
): Promise<{ fillMs: number; indexes: number; rebuildMs: number }> {
  const { rows } = await db.raw(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
       from pg_index i join pg_class t on t.oid = i.indrelid
      where t.relname = any(?) and not i.indisprimary
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
    [tables],
  );
  for (const r of rows) await db.raw(`drop index ${r.name}`);
  const t0 = performance.now();
  await fill();
  const t1 = performance.now();
  // A partitioned table's index is defined ON ONLY the parent; built that way it would cover no partition.
  for (const r of rows) await db.raw(r.def.replace(' ON ONLY ', ' ON '));
  return { fillMs: t1 - t0, indexes: rows.length, rebuildMs: performance.now() - t1 };
}

/**
 * For a seeding session under `session_replication_role = replica` (no trigger fires): the
 * triggers that keep what GET /communities counts (sql/114_community_counts.ts) fire anyway, from
 * now on in every session, as they do outside replica sessions (about 0.1 ms a row).
 */
export async function keepCommunityCounts(db: Knex): Promise<void> {
  await db.raw(`alter table posts enable always trigger posts_community_insert;
    alter table comments enable always trigger comments_community_insert`);
}

/** After a seed loaded posts and comments with triggers off: what GET /communities counts, recounted from them. */
export async function recountCommunities(db: Knex): Promise<void> {
  await db.raw('select svc_community_counts_refill()');
}

/**
 * The rank keys (post_ranks, sql/115, and per tag post_tag_ranks, sql/120) of every live post: a
 * seed that COPYs posts with `session_replication_role = replica` fires no trigger, so it writes
 * them itself, in one pass each.
 */
export async function fillPostRanks(db: Knex): Promise<void> {
  await db.raw(
    `insert into post_ranks (id, community_id, author_id, created_at, score, hot, tags)
       select id, community_id, author_id, created_at, score, hot, tags from posts where deleted_at is null
     on conflict (id) do nothing`,
  );
  await db.raw(
    `insert into post_tag_ranks (id, tag, author_id, created_at, score, hot)
       select distinct k.id, t.tag, k.author_id, k.created_at, k.score, k.hot
         from post_ranks k cross join lateral unnest(k.tags) t(tag)
     on conflict (id, tag) do nothing`,
  );
}
