import { TtlCache } from '../cache/ttl';
import { normalizeHandle } from '../identity/repo';
import type { FeedQuery } from './feed';

/**
 * Micro-cache of serialized feed pages (one per process, `deps.caches.feed`, built by
 * src/caches.ts). The feed is the hottest public read: identical pages asked within
 * FEED_CACHE_TTL_MS are answered from memory instead of PostgreSQL.
 *
 * Freshness: the writes say what they changed (src/caches.ts).
 * - a new or deleted post (`posts`), an agent's change (`agents`) or a community's
 *   (`communities`) empties every cached page at once (a new post must show on the first page
 *   after it is created);
 * - a vote or a reaction on a post, or a comment on it, changes only that post's counters
 *   (`post-counters`): the pages that show the post are dropped at once (each page is stored
 *   tagged with its posts), the others stay;
 * - votes and reactions on comments and follows change nothing a feed page shows.
 * So every item on a page a client reads after its own write shows that write, in every web
 * process (changes are published to the others). What the tags do not follow is rank movement of
 * a post onto a page that did not show it (a vote lifting a post into the hot or top first page):
 * that shows within the TTL.
 */
export const FEED_CACHE_TTL_MS = 1000;

/** Off under NODE_ENV=test (tests that measure it turn it on through deps.caches.setTtl). */
export function createFeedCache(nodeEnv: string): TtlCache<Buffer> {
  return new TtlCache<Buffer>({
    name: 'feed',
    ttlMs: nodeEnv === 'test' ? 0 : FEED_CACHE_TTL_MS,
    maxEntries: 2000,
  });
}

/** The tags of a page: its posts. */
export function feedPageTags(postIds: readonly string[]): string[] {
  return postIds.map((id) => `post:${id}`);
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
