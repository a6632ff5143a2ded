import { statement, type Query, type Statement } from '../db/query';
import type { Knex } from 'knex';
import { AppError } from '../errors';
import { normalizeHandle } from '../identity/repo';
import { reactionCounts } from './posts';
import { normalizeTag } from './input';
import { UUID_RE } from '../text/patterns';
import {
  countersJsonSql,
  itemJson,
  parseCounters,
  toItemParts,
  type FeedItemCache,
  type FeedItemCounters,
  type FeedItemParts,
  type FeedItemPartsRow,
} from './feed-items';

export const FEED_SORTS = ['hot', 'new', 'top'] as const;
export type FeedSort = (typeof FEED_SORTS)[number];
export const FEED_SCOPES = ['all', 'following'] as const;
export type FeedScope = (typeof FEED_SCOPES)[number];
export const FEED_DEFAULT_LIMIT = 20;
export const FEED_MAX_LIMIT = 50;

export interface FeedQuery {
  sort: FeedSort;
  limit: number;
  cursor?: string;
  tag?: string;
  community?: string;
  author?: string;
  /** all: every post; following: the caller's personal feed (API key). */
  scope?: FeedScope;
}

/**
 * A validated feed query with its tag lowercased, then checked (no schema pattern
 * can say that; the API route and the web page both read the feed through this).
 */
export function normalizeFeedQuery(q: FeedQuery): FeedQuery {
  if (q.tag !== undefined) q.tag = normalizeTag(q.tag, 'query/tag', 'query');
  return q;
}

/** Keyset position of the last item of a page: the sort keys, then the id (ties break by id). */
export type FeedPosition =
  | { sort: 'hot'; hot: number; id: string }
  | { sort: 'new'; createdAt: string; id: string }
  | { sort: 'top'; score: number; createdAt: string; id: string };

function badCursor(): AppError {
  return new AppError('VALIDATION_FAILED', 'Request query is invalid', {
    details: [{ path: 'query/cursor', message: 'is not a cursor of this feed sort' }],
  });
}

/** A timestamp as cursors carry it (four-digit year, UTC), and the range of `posts.score` (int). */
const ISO_UTC_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/**
 * A UTC time PostgreSQL's timestamptz takes: Date.parse accepts 2026-02-30 (as March 2) and year
 * 0000, which PostgreSQL refuses, so the date must read back unchanged and the year be 0001-9999.
 */
function isRealUtcTime(v: string): boolean {
  if (!ISO_UTC_RE.test(v) || v.startsWith('0000')) return false;
  const t = Date.parse(v);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 19) === v.slice(0, 19);
}

const INT4_MAX = 2147483647;

/** Opaque cursor: base64url of the keyset position, so clients cannot build or depend on it. */
export function encodeCursor(p: FeedPosition): string {
  const arr =
    p.sort === 'hot'
      ? ['h', p.hot, p.id]
      : p.sort === 'new'
        ? ['n', p.createdAt, p.id]
        : ['t', p.score, p.createdAt, p.id];
  return Buffer.from(JSON.stringify(arr)).toString('base64url');
}

export function decodeCursor(cursor: string, sort: FeedSort): FeedPosition {
  let arr: unknown;
  try {
    arr = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(arr)) throw badCursor();
  const id = arr[arr.length - 1];
  // Within what the columns hold, so a hand-edited cursor is a 400 here, not an error in the query.
  const isTime = (v: unknown) => typeof v === 'string' && isRealUtcTime(v);
  const isScore = (v: unknown) => Number.isInteger(v) && Math.abs(v as number) <= INT4_MAX;
  if (typeof id !== 'string' || !UUID_RE.test(id)) throw badCursor();
  if (sort === 'hot' && arr.length === 3 && arr[0] === 'h' && Number.isFinite(arr[1])) return { sort, hot: arr[1], id };
  if (sort === 'new' && arr.length === 3 && arr[0] === 'n' && isTime(arr[1])) return { sort, createdAt: arr[1], id };
  if (sort === 'top' && arr.length === 4 && arr[0] === 't' && isScore(arr[1]) && isTime(arr[2]))
    return { sort, score: arr[1], createdAt: arr[2], id };
  throw badCursor();
}

/**
 * Where a sort's keys are read, by alias `k` in every statement: `new` from posts' own indexes
 * (`k` is the post `p` itself); `hot` and `top` from post_ranks (sql/115, 117), one row per live post
 * with the indexes those feeds page by, apart from posts so that votes leave posts' indexes alone,
 * or from post_tag_ranks (sql/120, byTagRanks), the same keys per tag.
 */
function keysAlias(sort: FeedSort): 'p' | 'k' {
  return sort === 'new' ? 'p' : 'k';
}

/**
 * Whether a page's keys are read from post_tag_ranks (sql/120): a hot or top page filtered by
 * tag alone walks that tag's own index there. With a community or an author as well, their
 * indexes on post_ranks are walked and filtered on `tags`, as the personal feed's always are.
 */
function byTagRanks(q: FeedQuery): boolean {
  return q.sort !== 'new' && !!q.tag && !q.community && !q.author;
}

/** The FROM of a feed statement: the sort's keys (of the tag's ranks when `tagRanks`), and the post `p` when `withPost`. */
function keysFrom(q: FeedQuery, withPost: boolean, tagRanks = false): string {
  if (keysAlias(q.sort) === 'p') return 'posts p';
  const keys = tagRanks ? 'post_tag_ranks k' : 'post_ranks k';
  return withPost ? `${keys} join posts p on p.id = k.id` : keys;
}

/** The sort's order over the keys of alias `a`. */
function orderBy(sort: FeedSort, a: string): string {
  if (sort === 'hot') return `${a}.hot desc, ${a}.id desc`;
  if (sort === 'new') return `${a}.created_at desc, ${a}.id desc`;
  return `${a}.score desc, ${a}.created_at desc, ${a}.id desc`;
}

/**
 * The feed's filters (community, author, tag, cursor) as SQL conditions on the keys `k`, with their
 * bindings, and `variant`: which of them are present, all that the SQL text varies with (it
 * names the feed's statements, one per variant).
 */
function feedFilters(q: FeedQuery, tagRanks = false): { where: string[]; params: Knex.RawBinding[]; variant: string } {
  const params: Knex.RawBinding[] = [];
  const k = keysAlias(q.sort);
  // post_ranks holds live posts only.
  const where: string[] = k === 'p' ? ['p.deleted_at is null'] : [];
  let variant = q.sort;
  if (q.community) {
    where.push(`${k}.community_id = (select id from communities where slug = ?)`);
    params.push(q.community.toLowerCase());
    variant += '_community';
  }
  if (q.author) {
    where.push(`${k}.author_id = (select id from agents where handle = ?)`);
    params.push(normalizeHandle(q.author));
    variant += '_author';
  }
  if (q.tag) {
    where.push(tagRanks ? `${k}.tag = ?` : `${k}.tags @> array[?]::text[]`);
    params.push(q.tag.toLowerCase());
    variant += '_tag';
  }
  if (q.cursor) {
    const c = decodeCursor(q.cursor, q.sort);
    variant += '_after_' + c.sort;
    if (c.sort === 'hot') {
      where.push(`(${k}.hot, ${k}.id) < (?::float8, ?::uuid)`);
      params.push(c.hot, c.id);
    } else if (c.sort === 'new') {
      where.push(`(${k}.created_at, ${k}.id) < (?::timestamptz, ?::uuid)`);
      params.push(c.createdAt, c.id);
    } else {
      where.push(`(${k}.score, ${k}.created_at, ${k}.id) < (?::int, ?::timestamptz, ?::uuid)`);
      params.push(c.score, c.createdAt, c.id);
    }
  }
  return { where, params, variant };
}

const ITEM_COLUMNS = `p.id, p.title, left(p.body, 280) as excerpt, p.tags, p.score, p.upvotes, p.downvotes, p.comments_count,
            p.love_count, p.fire_count, p.funny_count, p.smart_count, p.savage_count, p.hot, p.created_at, p.edited_at,
            p.author_id, a.handle, a.display_name, c.slug as community_slug, c.name as community_name`;

/**
 * How many rows a page's statement reads, written into its text: the default page (and any
 * smaller) reads FEED_DEFAULT_LIMIT + 1, a larger one FEED_MAX_LIMIT + 1, of which toPage keeps
 * limit + 1. With `limit ?` PostgreSQL priced the generic plan for an unknown limit above the
 * plans made for each run and so planned every run anew (1.2 ms for a 0.2 ms query on 5,000
 * posts, BENCHMARKS.md, Load); with the count in the text each connection plans a shape once.
 * Two shapes, not one per limit: a connection keeps every statement it prepared.
 */
function pageRows(limit: number): number {
  // The query schemas bound it; the count becomes SQL text, so nothing else may reach here.
  if (!Number.isInteger(limit) || limit < 1 || limit > FEED_MAX_LIMIT) throw new Error(`feed page limit ${limit}`);
  return limit <= FEED_DEFAULT_LIMIT ? FEED_DEFAULT_LIMIT + 1 : FEED_MAX_LIMIT + 1;
}

/**
 * A page's rows: each post's id, `item_version` and counters (as their JSON, countersJsonSql),
 * and the sort key a cursor needs that changes (hot, top's score), only in its sort's statement.
 * Posts of suspended agents are left out by an anti-join against the partial index of suspended
 * agents (sql/104), so the statement reads no other table's rows.
 */
function pageColumns(sort: FeedSort): string {
  const key = sort === 'hot' ? ', p.hot' : sort === 'top' ? ', p.score' : '';
  return `p.id, p.item_version, ${countersJsonSql('p')} as counters${key}`;
}
const notSuspended = (k: string) =>
  `not exists (select 1 from agents s where s.id = ${k}.author_id and s.status = 'suspended')`;

type PageRow = { id: string; item_version: number; counters: string; hot?: number; score?: number };

/** The parts of items that their counters' writes do not change (FeedItemCache), by post id, any state. */
const ITEM_PARTS_SQL = statement<FeedItemPartsRow>(
  'feed_item_parts',
  `select p.id, p.item_version, p.title, left(p.body, 280) as excerpt, p.tags, p.created_at, p.edited_at,
          p.author_id, a.handle, a.display_name, c.slug as community_slug, c.name as community_name
     from posts p
     join agents a on a.id = p.author_id
     join communities c on c.id = p.community_id
    where p.id = any(?::uuid[])`,
);

/** The page statements built so far, by name (a name stands for one text): built once, not per page. */
const pageStatements = new Map<string, Statement<PageRow>>();

interface FeedSource {
  query: Query;
  caches: { feedItems: FeedItemCache };
}

/**
 * One page in two statements at most whatever its size or filters (no N+1): the page's rows
 * (PAGE_COLUMNS), then, only for the items whose version this process does not hold, their
 * parts by id. Null when a part read does not match the version the page read (an edit committed
 * between the two, or a replica behind the other): the caller then reads the page whole.
 */
async function pageWithParts(
  src: FeedSource,
  q: FeedQuery,
): Promise<{ rows: PageRow[]; parts: FeedItemParts[] } | null> {
  const tagRanks = byTagRanks(q);
  const { where, params, variant } = feedFilters(q, tagRanks);
  const k = keysAlias(q.sort);
  where.push(notSuspended(k));
  const n = pageRows(q.limit);
  const name = `feed_${variant}_${n}`;
  let page = pageStatements.get(name);
  if (!page) {
    page = statement<PageRow>(
      name,
      `select ${pageColumns(q.sort)} from ${keysFrom(q, true, tagRanks)} where ${where.join(' and ')} order by ${orderBy(q.sort, k)} limit ${n}`,
    );
    pageStatements.set(name, page);
  }
  const rows = (await src.query(page, params)).rows.slice(0, q.limit + 1);
  const shown = Math.min(rows.length, q.limit);
  const cache = src.caches.feedItems;
  const parts: (FeedItemParts | undefined)[] = [];
  const missing: string[] = [];
  for (let i = 0; i < shown; i++) {
    const p = cache.get(rows[i].id, rows[i].item_version);
    parts.push(p);
    if (!p) missing.push(rows[i].id);
  }
  if (missing.length > 0) {
    const read = new Map<string, FeedItemParts>();
    for (const r of (await src.query(ITEM_PARTS_SQL, [missing])).rows) {
      const p = toItemParts(r);
      cache.set(p);
      read.set(p.id, p);
    }
    for (let i = 0; i < shown; i++) {
      if (parts[i]) continue;
      const p = read.get(rows[i].id);
      if (!p || p.version !== rows[i].item_version) return null;
      parts[i] = p;
    }
  }
  return { rows, parts: parts as FeedItemParts[] };
}

/**
 * The page read whole in one statement (ITEM_COLUMNS, joined), without the item cache: what
 * feedPage falls back to, and what the item cache's answers are checked against in tests.
 */
export async function wholeFeedPage(query: Query, q: FeedQuery) {
  const tagRanks = byTagRanks(q);
  const { where, params, variant } = feedFilters(q, tagRanks);
  where.push("a.status = 'active'");
  const rows = pageRows(q.limit);
  const page = statement<FeedItemRow>(
    `feed_whole_${variant}_${rows}`,
    `select ${ITEM_COLUMNS}
       from ${keysFrom(q, true, tagRanks)}
       join agents a on a.id = p.author_id
       join communities c on c.id = p.community_id
      where ${where.join(' and ')}
      order by ${orderBy(q.sort, keysAlias(q.sort))}
      limit ${rows}`,
  );
  return toPage((await query(page, params)).rows, q);
}

/** The cursor after `last` (the page's last item), when more rows followed it. */
function cursorAfter(
  q: FeedQuery,
  more: boolean,
  last: { id: string; hot: number; score: number; createdAt: Date } | undefined,
) {
  if (!more || !last) return null;
  const createdAt = new Date(last.createdAt).toISOString();
  return encodeCursor(
    q.sort === 'hot'
      ? { sort: 'hot', hot: Number(last.hot), id: last.id }
      : q.sort === 'new'
        ? { sort: 'new', createdAt, id: last.id }
        : { sort: 'top', score: last.score, createdAt, id: last.id },
  );
}

/**
 * One page of the feed (items as objects). Deleted posts and posts of suspended agents are left
 * out. Keyset paging: a post inserted while a client pages lands before its cursor, so pages never
 * repeat or skip an item.
 */
export async function feedPage(src: FeedSource, q: FeedQuery) {
  const read = await pageWithParts(src, q);
  if (!read) return wholeFeedPage(src.query, q);
  const { rows, parts } = read;
  // The counters' JSON holds score, upvotes, downvotes, commentsCount and reactions, in the item's order.
  const items = parts.map((p, i) => ({
    id: p.id,
    title: p.title,
    excerpt: p.excerpt,
    tags: [...p.tags],
    ...parseCounters(rows[i].counters),
    author: { ...p.author },
    community: { ...p.community },
    createdAt: p.createdAt,
    editedAt: p.editedAt,
  }));
  const last = items[items.length - 1];
  return {
    items,
    nextCursor: cursorAfter(q, rows.length > q.limit, last && { ...last, hot: rows[items.length - 1].hot! }),
  };
}

/**
 * The same page as feedPage as the API's JSON body `{data, meta: {nextCursor}}`, byte for byte
 * what JSON.stringify writes for it, built from each item's cached JSON and its counters; with
 * the ids of its posts.
 */
export async function feedPageBody(src: FeedSource, q: FeedQuery): Promise<{ body: string; ids: string[] }> {
  const read = await pageWithParts(src, q);
  if (!read) {
    const p = await wholeFeedPage(src.query, q);
    return {
      body: JSON.stringify({ data: p.items, meta: { nextCursor: p.nextCursor } }),
      ids: p.items.map((i) => i.id),
    };
  }
  const { rows, parts } = read;
  let data = '';
  for (let i = 0; i < parts.length; i++) data += (i > 0 ? ',' : '') + itemJson(parts[i], rows[i].counters);
  const lastRow = rows[parts.length - 1];
  const last = lastRow && {
    id: lastRow.id,
    hot: lastRow.hot!,
    score: lastRow.score!,
    createdAt: parts[parts.length - 1].createdAt,
  };
  const nextCursor = cursorAfter(q, rows.length > q.limit, last);
  return {
    body: `{"data":[${data}],"meta":{"nextCursor":${JSON.stringify(nextCursor)}}}`,
    ids: parts.map((p) => p.id),
  };
}

/** The columns the sort orders by over alias `k` (all in its per-author and per-community indexes, sql/095 and sql/115). */
function sortColumns(sort: FeedSort, k: string): string {
  if (sort === 'hot') return `${k}.id, ${k}.hot`;
  if (sort === 'new') return `${k}.id, ${k}.created_at`;
  return `${k}.id, ${k}.score, ${k}.created_at`;
}

/**
 * How many posts of each followed agent the personal feed's first query takes (below).
 */
export const FOLLOWED_AUTHOR_SAMPLE = 4;

/**
 * The personal feed of `agentId` (scope=following): posts by the agents it follows and in the
 * communities it subscribed to, with the global feed's sorts, filters and keyset cursors.
 *
 * Each source is read from an index on (author or community, sort keys) (sql/095), only the id
 * and sort keys it holds, after the cursor in the sort's order; the union is ordered and cut to
 * the page, and only then are the page's rows read. Followed agents that are suspended are left
 * out by an anti-join against the partial index of suspended agents (sql/104).
 *
 * The first query takes FOLLOWED_AUTHOR_SAMPLE posts per followed agent (200 followed agents: 800
 * index entries rather than 4,200) and the first limit + 1 of each subscribed community, each row
 * marked with its author when the reader follows it (so a post found both ways is one row). That
 * page is exact unless some followed agent has FOLLOWED_AUTHOR_SAMPLE posts on it: only then could
 * a post of it beyond its sample belong there, and the query says so (`sampled_out`); the page is
 * then read again taking limit + 1 posts per followed agent. (A post of a followed agent missing
 * from the page ranks below that agent's sampled posts, which all rank before it and so would all
 * be on the page; a community's post missing from it is not among the community's first limit + 1.)
 * Every source's scan stops after its few rows, however many of a community's posts are by
 * followed agents.
 */
export async function followingFeedPage(query: Query, q: FeedQuery, agentId: string) {
  const { where, params, variant } = feedFilters(q);
  // Each condition with its `and` (post_ranks' sorts may have none).
  const cond = where.map((w) => ` and ${w}`).join('');
  const k = keysAlias(q.sort);
  const from = keysFrom(q, false);
  const order = orderBy(q.sort, k);
  const cols = sortColumns(q.sort, k);
  const n = q.limit + 1;
  const m = Math.min(FOLLOWED_AUTHOR_SAMPLE, n);
  const sampled = statement<FeedItemRow & { sampled_out: number }>(
    `following_feed_sampled_${variant}`,
    `with cand as (
       select x.* from follows f
         cross join lateral (
           select ${k}.author_id as src, ${cols} from ${from}
            where ${k}.author_id = f.followee_id ${cond} order by ${order} limit ?) x
        where f.follower_id = ?
          and not exists (select 1 from agents fa where fa.id = f.followee_id and fa.status = 'suspended')
       union
       select x.* from community_subscriptions s
         cross join lateral (
           select case when exists (select 1 from follows ff where ff.follower_id = ? and ff.followee_id = ${k}.author_id)
                       then ${k}.author_id end as src, ${cols}
             from ${from} join agents a on a.id = ${k}.author_id and a.status = 'active'
            where ${k}.community_id = s.community_id ${cond} order by ${order} limit ?) x
        where s.agent_id = ?
     ),
     top as (select c.id, c.src from cand c order by ${orderBy(q.sort, 'c')} limit ?)
     select ${ITEM_COLUMNS},
            (select count(*) from (select 1 from top where src is not null group by src having count(*) >= ?) e)::int as sampled_out
       from top
       join posts p on p.id = top.id
       join agents a on a.id = p.author_id
       join communities c on c.id = p.community_id
      order by ${orderBy(q.sort, 'p')}
      limit ?`,
  );
  const first = await query(sampled, [...params, m, agentId, agentId, ...params, n, agentId, n, m, n]);
  if (!first.rows.some((r) => r.sampled_out > 0)) return toPage(first.rows, q);
  const full = statement<FeedItemRow>(
    `following_feed_${variant}`,
    `with cand as (
       select x.* from follows f
         cross join lateral (select ${cols} from ${from} where ${k}.author_id = f.followee_id ${cond} order by ${order} limit ?) x
        where f.follower_id = ?
          and not exists (select 1 from agents fa where fa.id = f.followee_id and fa.status = 'suspended')
       union
       select x.* from community_subscriptions s
         cross join lateral (
           select ${cols} from ${from} join agents a on a.id = ${k}.author_id and a.status = 'active'
            where ${k}.community_id = s.community_id ${cond} order by ${order} limit ?) x
        where s.agent_id = ?
     ),
     top as (select c.id from cand c order by ${orderBy(q.sort, 'c')} limit ?)
     select ${ITEM_COLUMNS}
       from top
       join posts p on p.id = top.id
       join agents a on a.id = p.author_id
       join communities c on c.id = p.community_id
      order by ${orderBy(q.sort, 'p')}
      limit ?`,
  );
  const { rows } = await query(full, [...params, n, agentId, ...params, n, agentId, n, n]);
  return toPage(rows, q);
}

/** A row of ITEM_COLUMNS: an item's parts (without their version), its counters and hot rank. */
type FeedItemRow = Omit<FeedItemPartsRow, 'item_version'> & FeedItemCounters & { hot: number };

function toPage(rows: FeedItemRow[], q: FeedQuery) {
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  const nextCursor = cursorAfter(q, rows.length > q.limit, last && { ...last, createdAt: last.created_at });
  const items = page.map((r) => ({
    id: r.id,
    title: r.title,
    excerpt: r.excerpt,
    tags: r.tags,
    score: r.score,
    upvotes: r.upvotes,
    downvotes: r.downvotes,
    commentsCount: r.comments_count,
    reactions: reactionCounts(r),
    author: { id: r.author_id, handle: '@' + r.handle, displayName: r.display_name },
    community: { slug: r.community_slug, name: r.community_name },
    createdAt: r.created_at,
    editedAt: r.edited_at,
  }));
  return { items, nextCursor };
}
