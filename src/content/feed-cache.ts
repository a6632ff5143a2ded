import { TtlCache } from '../cache/ttl';
import { cacheResponsesOf } from '../cache/response-cache';
import { normalizeHandle } from '../identity/repo';
import type { FeedQuery } from './feed';

/**
 * Micro-cache of serialized feed pages (src/cache/ttl.ts). The feed is the hottest public read:
 * identical pages asked within FEED_CACHE_TTL_MS are answered from memory instead of PostgreSQL.
 *
 * Freshness after a write through this process:
 * - a new or deleted post, and any write to posts, agents or communities not listed below, makes
 *   every cached page stale at once (a new post must show on the first page after it is created);
 * - a vote or a reaction on a post, or a comment on it, changes only that post's counters: the
 *   pages that show the post are dropped at once (each page is stored tagged with its posts), the
 *   others stay. Such statements carry FEED_TAGGED_SQL so the table watch leaves them to the tags;
 * - votes and reactions on comments and follows change nothing a feed page shows.
 * So every item on a page a client reads after its own write shows that write. What the tags do
 * not follow is rank movement of a post onto a page that did not show it (a vote lifting a post
 * into the hot or top first page): that shows within the TTL, as do writes through other
 * processes and admin changes such as a suspension.
 */
export const FEED_CACHE_TTL_MS = 1000;

/** Marks a statement whose feed effect its caller declares post by post (WriteResult.feedPosts). */
export const FEED_TAGGED_SQL = '/* feed: tagged */';

const cache = new TtlCache<string>({
  name: 'feed',
  ttlMs: FEED_CACHE_TTL_MS,
  maxEntries: 2000,
  tables: ['posts', 'agents', 'communities'],
  ignore: (sql) => sql.startsWith(FEED_TAGGED_SQL),
});
cacheResponsesOf('getFeed', cache);

/** null: the default of the environment (off under NODE_ENV=test). */
let override: number | null = null;

/** Benchmarks and tests choose the TTL (0 disables the cache; null restores the default). */
export function setFeedCacheTtl(ms: number | null): void {
  override = ms;
  cache.setTtl(ms);
}

/** Applies the environment's default unless a TTL was set explicitly. */
export function configureFeedCache(nodeEnv: string): void {
  const want = override ?? (nodeEnv === 'test' ? 0 : FEED_CACHE_TTL_MS);
  if (cache.ttl !== want) cache.setTtl(want);
}

/** Called after a content write commits. */
export function invalidateFeedCache(): void {
  cache.invalidate();
}

/** The tags of a page: its posts. */
export function feedPageTags(postIds: readonly string[]): string[] {
  return postIds.map((id) => `post:${id}`);
}

/** Called after a write that changed only these posts' counters commits: drops the pages that show them. */
export function invalidateFeedPosts(postIds: readonly string[]): void {
  cache.invalidateTags(feedPageTags(postIds));
}

export function feedCacheKey(q: FeedQuery): string {
  return [
    q.sort,
    q.limit,
    q.cursor ?? '',
    q.tag?.toLowerCase() ?? '',
    q.community?.toLowerCase() ?? '',
    q.author ? normalizeHandle(q.author) : '',
  ].join('\u0000');
}

/**
 * A feed page's body from memory, or loaded once for all the requests of its key that arrive
 * while it loads (after a new post empties the cache, they share one query instead of a query
 * each) and stored tagged with its posts; a write committed meanwhile keeps it out of the cache.
 * `tags`: the page's, when this call loaded it or shared the load; none for a page from memory.
 */
export function loadFeedPage(key: string, load: () => Promise<{ value: string; tags: readonly string[] }>) {
  return cache.loadTagged(key, load);
}
