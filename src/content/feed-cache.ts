import { normalizeHandle } from '../identity/repo';
import type { FeedQuery } from './feed';

/**
 * Micro-cache of serialized feed pages. The feed is the hottest public read: identical pages
 * asked within FEED_CACHE_TTL_MS are answered from memory instead of PostgreSQL. Every content
 * write that this process commits bumps the generation, so a client reading after its own write
 * never sees the page from before it; writes through other processes (and admin changes such as
 * a suspension) show up within the TTL.
 */
export const FEED_CACHE_TTL_MS = 1000;
const MAX_ENTRIES = 2000;

/** null: the default of the environment (off under NODE_ENV=test, whose tests edit rows directly). */
let override: number | null = null;
let ttlMs = FEED_CACHE_TTL_MS;
let generation = 0;
const entries = new Map<string, { gen: number; at: number; body: string }>();

/** Benchmarks and tests choose the TTL (0 disables the cache; null restores the default). */
export function setFeedCacheTtl(ms: number | null): void {
  override = ms;
  entries.clear();
}

/** Applies the environment's default unless a TTL was set explicitly. */
export function configureFeedCache(nodeEnv: string): void {
  ttlMs = override ?? (nodeEnv === 'test' ? 0 : FEED_CACHE_TTL_MS);
}

/** Called after a content write commits. */
export function invalidateFeedCache(): void {
  generation++;
  entries.clear();
}

export function feedCacheKey(q: FeedQuery): string {
  return [q.sort, q.limit, q.cursor ?? '', q.tag?.toLowerCase() ?? '', q.community?.toLowerCase() ?? '', q.author ? normalizeHandle(q.author) : ''].join('\u0000');
}

export function getCachedFeed(key: string, nowMs = Date.now()): string | undefined {
  if (ttlMs <= 0) return undefined;
  const e = entries.get(key);
  if (!e) return undefined;
  if (e.gen !== generation || nowMs - e.at >= ttlMs) {
    entries.delete(key);
    return undefined;
  }
  return e.body;
}

/** Stores a page computed under generation `gen` (a write committed meanwhile makes it stale). */
export function putCachedFeed(key: string, body: string, gen: number, nowMs = Date.now()): void {
  if (ttlMs <= 0 || gen !== generation) return;
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
  entries.set(key, { gen, at: nowMs, body });
}

export function feedCacheGeneration(): number {
  return generation;
}
