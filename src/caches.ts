import type { Knex } from 'knex';
import type { TtlCache } from './cache/ttl';
import { ResponseCache } from './cache/response-cache';
import { ChangeBus, DataChange } from './cache/change-bus';
import { createFeedCache, feedPageTags } from './content/feed-cache';
import { FeedItemCache } from './content/feed-items';
import { ApiKeyCache, createApiKeyCache } from './identity/authenticate';
import { AchievementsCache, createReputationCaches, reputationTags } from './reputation/service';
import { createLeaderboardCache } from './leaderboards/service';
import type { Logger } from './log';

export type { DataChange } from './cache/change-bus';

/**
 * The read caches of one process, built by the composition root (src/boot.ts; tests'
 * test/helpers/context.ts) and reached through `deps.caches`. Each is a bounded TtlCache
 * (src/cache/ttl.ts):
 *
 * | cache        | holds                                        | TTL   | emptied by                      |
 * |--------------|----------------------------------------------|-------|---------------------------------|
 * | feed         | feed page bodies, tagged with their posts    | 1 s   | posts, communities, agents; post-counters (its pages only) |
 * | apiKeys      | principals of live keys, by key hash         | 3 s (60 s while listening) | api-keys, agents (announced in their transaction) |
 * | reputation   | GET /agents/{handle}/reputation bodies, tagged with the agent | 30 s | scores (its agents' only when listed), snapshots, agents |
 * | achievements | top-N placements of the current week         | 30 s  | snapshots                       |
 * | leaderboards | GET /leaderboards bodies                     | 5 s   | snapshots                       |
 *
 * THE INVALIDATION API: code that commits a write changing what a cache holds calls
 * `deps.caches.changed(...changes)` once the write committed (a DataChange per kind of data:
 * src/cache/change-bus.ts), or returns the changes in its WriteResult (`changes`), which
 * sendWrite/sendAtomicWrite apply. It evicts this process's entries at once (a read that started
 * before is not stored: TtlCache generations) and publishes the changes to every other process
 * (PostgreSQL NOTIFY, src/cache/change-bus.ts), whose listeners evict the same. Await it before
 * answering (or returning from a CLI command or a job): the client that reads next from another
 * process then reads the change. The TTL is only the fallback for a lost notification.
 *
 * `feedItems` (src/content/feed-items.ts) is no TtlCache and never evicted by a change: its entries
 * are keyed by a version every such write bumps in its own transaction, and used only when the
 * feed's query read that same version.
 *
 * `responses` replays anonymous GETs of the feed, leaderboards and reputation from these same
 * caches (src/cache/response-cache.ts).
 */
export class Caches {
  readonly feed: TtlCache<Buffer>;
  readonly feedItems = new FeedItemCache();
  readonly apiKeys: ApiKeyCache;
  readonly reputation: TtlCache<Buffer>;
  readonly achievements: AchievementsCache;
  readonly leaderboards: TtlCache<Buffer>;
  readonly responses: ResponseCache;
  private readonly all: TtlCache<unknown>[];

  /** `bus`: the process's link to the others (absent: changes stay in this process). */
  constructor(
    nodeEnv: string,
    private readonly bus?: ChangeBus,
  ) {
    this.feed = createFeedCache(nodeEnv);
    this.apiKeys = createApiKeyCache(() => this.bus?.listening === true);
    const rep = createReputationCaches();
    this.reputation = rep.reputation;
    this.achievements = rep.achievements;
    this.leaderboards = createLeaderboardCache();
    this.all = [this.feed, this.apiKeys, this.reputation, this.achievements, this.leaderboards] as TtlCache<unknown>[];
    this.responses = new ResponseCache({
      getFeed: this.feed,
      getLeaderboard: this.leaderboards,
      getAgentReputation: this.reputation,
    });
  }

  /**
   * A committed write changed this data: evicts here at once and tells the other processes.
   * Never rejects; resolves once the other processes were told (or could not be: their TTLs).
   */
  changed(...changes: DataChange[]): Promise<void> {
    if (changes.length === 0) return Promise.resolve();
    this.evict(changes);
    return this.bus ? this.bus.publish(changes) : Promise.resolve();
  }

  /**
   * In the transaction of a write of what the API-key cache holds (a key revoked, an agent's
   * status, owner or names): announces the changes to the other processes at its commit, so no
   * process can miss them while it listens (which lets that cache keep a principal 60 s instead
   * of 3, createApiKeyCache). Once the write committed, evict() empties this process's caches.
   */
  announce(trx: Knex.Transaction, ...changes: DataChange[]): Promise<void> {
    return this.bus ? this.bus.announceIn(trx, changes) : Promise.resolve();
  }

  /**
   * With read replicas: evict every change a second time this many ms later, so an entry filled
   * meanwhile from a replica that had not replayed the change yet does not outlive the lag bound.
   */
  evictAgainAfterMs: number | null = null;

  /** Evicts what `changes` make stale in this process only (the bus's listener calls it for other processes' changes). */
  evict(changes: readonly DataChange[]): void {
    this.evictNow(changes);
    if (this.evictAgainAfterMs !== null) setTimeout(() => this.evictNow(changes), this.evictAgainAfterMs).unref();
  }

  private evictNow(changes: readonly DataChange[]): void {
    for (const c of changes) {
      switch (c.kind) {
        case 'posts':
        case 'communities':
          this.feed.invalidate();
          break;
        case 'post-counters':
          this.feed.invalidateTags(feedPageTags(c.postIds));
          break;
        case 'agents':
          this.feed.invalidate();
          this.apiKeys.invalidate();
          this.reputation.invalidate();
          break;
        case 'api-keys':
          this.apiKeys.invalidate();
          break;
        case 'scores':
          if (c.agentIds) this.reputation.invalidateTags(reputationTags(c.agentIds));
          else this.reputation.invalidate();
          break;
        case 'snapshots':
          this.reputation.invalidate();
          this.achievements.invalidate();
          this.leaderboards.invalidate();
          break;
      }
    }
  }

  /** Empties every cache (after the listener reconnected: notifications may have been lost). */
  clear(): void {
    for (const c of this.all) c.invalidate();
  }

  /** Web processes: evict on the other processes' changes from now on. */
  listen(): Promise<void> {
    if (!this.bus) return Promise.resolve();
    return this.bus.listen(
      (changes) => this.evict(changes),
      () => this.clear(),
    );
  }

  async close(): Promise<void> {
    await this.bus?.close();
  }

  /** Benchmarks and tests: one cache's TTL by name (0 off, null its default), or every cache's with '*'. */
  setTtl(name: string, ms: number | null): void {
    for (const c of this.all) if (name === '*' || c.name === name) c.setTtl(ms);
  }

  stats(): { name: string; ttlMs: number; size: number; hits: number; misses: number }[] {
    return this.all.map((c) => ({ name: c.name, ttlMs: c.ttl, size: c.size, hits: c.hits, misses: c.misses }));
  }
}

/** The caches of a process, linked to the others through `connectionString`'s database. */
export function createCaches(nodeEnv: string, connectionString: string, log: Logger): Caches {
  return new Caches(nodeEnv, new ChangeBus(connectionString, log));
}
