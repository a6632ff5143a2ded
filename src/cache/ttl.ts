import type { Knex } from 'knex';

/**
 * Small in-process read caches (feed pages, leaderboard and reputation bodies, API-key
 * principals) with one freshness rule:
 *
 * - Within this process a read never sees data from before a write this process committed:
 *   every statement that writes a watched table (any knex instance made by createDb, so web
 *   handlers, in-process jobs, the CLI and tests editing rows directly) bumps the cache's
 *   generation when it runs and again when its connection goes back to the pool (after COMMIT);
 *   a value loaded under an older generation is never stored.
 * - Writes by other processes (another web instance, the worker, the admin CLI) show up within
 *   the cache's TTL, a few seconds at most.
 *
 * Entries are bounded (least recently used evicted first). Concurrent misses of one key share
 * one load (no stampede when an entry expires under load).
 *
 * Tags narrow the first rule where a write knows what it changed: an entry stored with tags
 * (e.g. the posts a feed page shows) is dropped by invalidateTags() of any of them, and a value
 * loaded before that call is not stored with that tag; the rest of the cache stays. A write that
 * names its tags marks its statements so the table watch leaves the cache to the tags (`ignore`).
 */

export interface TtlCacheOptions {
  /** Name in logs, docs and setCacheTtl(). */
  name: string;
  ttlMs: number;
  maxEntries: number;
  /** Tables whose writes invalidate the whole cache. */
  tables: readonly string[];
  /** Statements on those tables that do not change what the cache holds (e.g. a last-used timestamp). */
  ignore?: (sql: string) => boolean;
}

const registry = new Map<string, TtlCache<unknown>>();
/** Tags remembered per cache before a tag invalidation turns into a whole one. */
const TAG_MEMORY = 20_000;
/** Table → caches watching it. */
const watchers = new Map<string, TtlCache<unknown>[]>();

/** A loaded value and the tags it is stored with. */
export interface Loaded<V> {
  value: V;
  tags?: readonly string[];
}

export class TtlCache<V> {
  readonly name: string;
  readonly defaultTtlMs: number;
  private ttlMs: number;
  private readonly maxEntries: number;
  readonly ignore?: (sql: string) => boolean;
  /** Stamp counter: every invalidation, whole or by tag, moves it on. */
  private seq = 0;
  /** Stamp of the last whole invalidation: a value loaded before it is never stored. */
  private wholeAt = 0;
  /** Tag → stamp of its last invalidation (cleared by a whole invalidation, which supersedes it). */
  private readonly tagAt = new Map<string, number>();
  private readonly keysOfTag = new Map<string, Set<string>>();
  private readonly entries = new Map<string, { at: number; value: V; tags?: readonly string[] }>();
  private readonly inflight = new Map<string, { gen: number; promise: Promise<Loaded<V>> }>();
  hits = 0;
  misses = 0;

  constructor(opts: TtlCacheOptions) {
    if (registry.has(opts.name)) throw new Error(`cache ${opts.name} is defined twice`);
    this.name = opts.name;
    this.defaultTtlMs = opts.ttlMs;
    this.ttlMs = opts.ttlMs;
    this.maxEntries = opts.maxEntries;
    this.ignore = opts.ignore;
    registry.set(opts.name, this as TtlCache<unknown>);
    for (const t of opts.tables) watchers.set(t, [...(watchers.get(t) ?? []), this as TtlCache<unknown>]);
  }

  get ttl(): number {
    return this.ttlMs;
  }

  /** 0 disables the cache; null restores the default. Clears it either way. */
  setTtl(ms: number | null): void {
    this.ttlMs = ms ?? this.defaultTtlMs;
    this.invalidate();
  }

  /** The stamp to take before loading a value that will be put(): invalidations after it make the value unfit. */
  generation(): number {
    return this.seq;
  }

  invalidate(): void {
    this.wholeAt = ++this.seq;
    this.entries.clear();
    this.inflight.clear();
    this.tagAt.clear();
    this.keysOfTag.clear();
  }

  /** Drops the entries stored with any of `tags`; values loaded before this call are not stored with them. */
  invalidateTags(tags: readonly string[]): void {
    if (tags.length === 0) return;
    // Bounded memory: past this many remembered tags, forgetting them all is the same as a whole invalidation.
    if (this.tagAt.size + tags.length > TAG_MEMORY) return this.invalidate();
    const at = ++this.seq;
    for (const t of tags) {
      this.tagAt.set(t, at);
      const keys = this.keysOfTag.get(t);
      if (keys) for (const k of [...keys]) this.drop(k);
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    for (const t of e.tags ?? []) {
      const keys = this.keysOfTag.get(t);
      keys?.delete(key);
      if (keys?.size === 0) this.keysOfTag.delete(t);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, nowMs = Date.now()): V | undefined {
    if (this.ttlMs <= 0) return undefined;
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (nowMs - e.at >= this.ttlMs) {
      this.drop(key);
      return undefined;
    }
    // Re-inserting keeps Map order = least recently used first.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /**
   * Stores a value loaded since stamp `gen` (generation()); a whole invalidation since then, or an
   * invalidation of one of its `tags`, makes it unfit.
   */
  put(key: string, value: V, gen: number, nowMs = Date.now(), tags?: readonly string[]): void {
    if (this.ttlMs <= 0 || gen < this.wholeAt) return;
    if (tags) for (const t of tags) if ((this.tagAt.get(t) ?? -1) > gen) return;
    this.drop(key);
    while (this.entries.size >= this.maxEntries) this.drop(this.entries.keys().next().value as string);
    this.entries.set(key, tags && tags.length > 0 ? { at: nowMs, value, tags } : { at: nowMs, value });
    for (const t of tags ?? []) {
      let keys = this.keysOfTag.get(t);
      if (!keys) this.keysOfTag.set(t, (keys = new Set()));
      keys.add(key);
    }
  }

  /**
   * The cached value, or `load()` once for all concurrent callers of the same generation.
   * `cacheable(v)` false: returned but not stored (e.g. a result that must not be remembered).
   */
  async load(key: string, load: () => Promise<V>, cacheable: (v: V) => boolean = () => true): Promise<V> {
    const r = await this.loadEntry(key, async () => ({ value: await load() }), cacheable);
    return r.value;
  }

  /**
   * load() of a value stored with tags (a feed page, tagged with its posts): the loader returns
   * both. `hit`: answered from memory, whose tags are not returned.
   */
  loadTagged(key: string, load: () => Promise<Loaded<V>>): Promise<Loaded<V> & { hit: boolean }> {
    return this.loadEntry(key, load, () => true);
  }

  private async loadEntry(
    key: string,
    load: () => Promise<Loaded<V>>,
    cacheable: (v: V) => boolean,
  ): Promise<Loaded<V> & { hit: boolean }> {
    const hit = this.get(key);
    if (hit !== undefined) {
      this.hits++;
      return { value: hit, hit: true };
    }
    this.misses++;
    if (this.ttlMs <= 0) return { ...(await load()), hit: false };
    const gen = this.seq;
    const running = this.inflight.get(key);
    // Shared only if nothing was invalidated since it started: a caller after a tag invalidation
    // may be reading its own write, which a load begun before it cannot show.
    if (running && running.gen === this.seq) return { ...(await running.promise), hit: false };
    const promise = load().then(
      (r) => {
        if (this.inflight.get(key)?.promise === promise) this.inflight.delete(key);
        if (cacheable(r.value)) this.put(key, r.value, gen, undefined, r.tags);
        return r;
      },
      (e) => {
        if (this.inflight.get(key)?.promise === promise) this.inflight.delete(key);
        throw e;
      },
    );
    this.inflight.set(key, { gen, promise });
    return { ...(await promise), hit: false };
  }
}

export function getCache(name: string): TtlCache<unknown> | undefined {
  return registry.get(name);
}

/** Benchmarks and tests: set one cache's TTL (0 off, null default), or every cache's with name '*'. */
export function setCacheTtl(name: string, ms: number | null): void {
  for (const c of registry.values()) if (name === '*' || c.name === name) c.setTtl(ms);
}

export function cacheStats(): { name: string; ttlMs: number; size: number; hits: number; misses: number }[] {
  return [...registry.values()].map((c) => ({
    name: c.name,
    ttlMs: c.ttl,
    size: c.size,
    hits: c.hits,
    misses: c.misses,
  }));
}

// Writing statements and the table they write: INSERT INTO t, UPDATE t, DELETE FROM t, also inside CTEs.
// "FOR UPDATE OF t" and "DO UPDATE SET" name no watched table, so they never match one.
const WRITE_RE = /\b(?:insert\s+into|update|delete\s+from)\s+(?:only\s+)?(?:"?public"?\.)?"?([a-z_][a-z0-9_]*)"?/gi;
const TRUNCATE_RE = /^\s*truncate\b/i;

/** Caches that `sql` makes stale (empty for reads and for writes to unwatched tables). */
export function cachesWrittenBy(sql: string): TtlCache<unknown>[] {
  if (TRUNCATE_RE.test(sql)) return [...registry.values()];
  const out: TtlCache<unknown>[] = [];
  WRITE_RE.lastIndex = 0;
  for (let m = WRITE_RE.exec(sql); m; m = WRITE_RE.exec(sql)) {
    const ws = watchers.get(m[1].toLowerCase());
    if (!ws) continue;
    for (const c of ws) {
      if (c.ignore?.(sql)) continue;
      if (!out.includes(c)) out.push(c);
    }
  }
  return out;
}

/**
 * Wires a knex instance to the caches: a write to a watched table invalidates them when it is
 * sent and again when its connection returns to the pool, i.e. after its transaction committed
 * or rolled back (a read that raced the uncommitted write cannot stay cached).
 */
export function observeWrites(db: Knex): void {
  const pending = new Map<string, Set<TtlCache<unknown>>>();
  db.on('query', (q: { sql?: string; __knexUid?: string }) => {
    if (typeof q.sql !== 'string') return;
    const stale = cachesWrittenBy(q.sql);
    if (stale.length === 0) return;
    for (const c of stale) c.invalidate();
    if (!q.__knexUid) return;
    let s = pending.get(q.__knexUid);
    if (!s) pending.set(q.__knexUid, (s = new Set()));
    for (const c of stale) s.add(c);
  });
  const client = db.client as { releaseConnection(conn: { __knexUid?: string }): Promise<void> };
  const release = client.releaseConnection.bind(client);
  client.releaseConnection = (conn) => {
    const s = conn?.__knexUid ? pending.get(conn.__knexUid) : undefined;
    if (s) {
      pending.delete(conn.__knexUid!);
      for (const c of s) c.invalidate();
    }
    return release(conn);
  };
}
