/**
 * A small in-process read cache: bounded (least recently used evicted first), with a TTL, one
 * load per key under concurrency (no stampede when an entry expires under load), and
 * generations so a value loaded before an invalidation is never stored.
 *
 * A TtlCache knows nothing of the database: the code that changes the data it holds evicts it
 * (src/caches.ts says which change empties which cache). Tags narrow an eviction where
 * a write knows what it changed: an entry stored with tags (e.g. the posts a feed page shows) is
 * dropped by invalidateTags() of any of them, and a value loaded before that call is not stored
 * with that tag; the rest of the cache stays.
 */

export interface TtlCacheOptions {
  /** Name in logs, docs and ReadCaches.setTtl(). */
  name: string;
  ttlMs: number;
  maxEntries: number;
  /**
   * A longer TTL that applies while `while()` holds (and the TTL is its default): for a cache
   * whose every change is announced in the committing transaction, while this process hears the
   * announcements (src/caches.ts, apiKeys). `ttlMs` stays the bound when it does not.
   */
  heardTtl?: { ms: number; while: () => boolean };
}

/** Tags remembered per cache before a tag invalidation turns into a whole one. */
const TAG_MEMORY = 20_000;

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
  private readonly heardTtl?: TtlCacheOptions['heardTtl'];
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
    this.name = opts.name;
    this.defaultTtlMs = opts.ttlMs;
    this.ttlMs = opts.ttlMs;
    this.maxEntries = opts.maxEntries;
    this.heardTtl = opts.heardTtl;
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
    return this.fresh(key, nowMs)?.value;
  }

  /** The live entry of `key` with its tags, marked as used. */
  private fresh(key: string, nowMs = Date.now()): { value: V; tags?: readonly string[] } | undefined {
    if (this.ttlMs <= 0) return undefined;
    const e = this.entries.get(key);
    if (!e) return undefined;
    const ttl =
      this.heardTtl && this.ttlMs === this.defaultTtlMs && this.heardTtl.while() ? this.heardTtl.ms : this.ttlMs;
    if (nowMs - e.at >= ttl) {
      this.drop(key);
      return undefined;
    }
    // Re-inserting keeps Map order = least recently used first.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e;
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
   * both. `hit`: answered from memory (with the tags it was stored with).
   */
  loadTagged(key: string, load: () => Promise<Loaded<V>>): Promise<Loaded<V> & { hit: boolean }> {
    return this.loadEntry(key, load, () => true);
  }

  private async loadEntry(
    key: string,
    load: () => Promise<Loaded<V>>,
    cacheable: (v: V) => boolean,
  ): Promise<Loaded<V> & { hit: boolean }> {
    const hit = this.fresh(key);
    if (hit !== undefined) {
      this.hits++;
      return hit.tags ? { value: hit.value, tags: hit.tags, hit: true } : { value: hit.value, hit: true };
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
