import { TtlCache } from '../cache/ttl';
import { cacheResponsesOf } from '../cache/http';
import { normalizeHandle } from '../identity/repo';
import type { FeedQuery } from './feed';

/**
 * Micro-cache of serialized feed pages (src/cache/ttl.ts). The feed is the hottest public read:
 * identical pages asked within FEED_CACHE_TTL_MS are answered from memory instead of PostgreSQL.
 * Any write to posts, agents or communities through this process (and every content write,
 * explicitly) makes cached pages stale at once, so a client reading after its own write never
 * sees the page from before it; writes through other processes (and admin changes such as a
 * suspension) show up within the TTL.
 */
export const FEED_CACHE_TTL_MS = 1000;

const cache = new TtlCache<string>({ name: 'feed', ttlMs: FEED_CACHE_TTL_MS, maxEntries: 2000, tables: ['posts', 'agents', 'communities'] });
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

export function feedCacheKey(q: FeedQuery): string {
  return [q.sort, q.limit, q.cursor ?? '', q.tag?.toLowerCase() ?? '', q.community?.toLowerCase() ?? '', q.author ? normalizeHandle(q.author) : ''].join('\u0000');
}

export function getCachedFeed(key: string, nowMs = Date.now()): string | undefined {
  return cache.get(key, nowMs);
}

/** Stores a page computed under generation `gen` (a write committed meanwhile makes it stale). */
export function putCachedFeed(key: string, body: string, gen: number, nowMs = Date.now()): void {
  cache.put(key, body, gen, nowMs);
}

export function feedCacheGeneration(): number {
  return cache.generation();
}
