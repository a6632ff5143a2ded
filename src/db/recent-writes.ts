import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { throttledWarning, type Logger } from '../log';
import { withDeadline } from '../limits/deadline';

/**
 * Read-your-writes with read replicas: who wrote within the last `windowMs`. A write request of
 * an agent or owner marks it (its agent id and its owner's id) before its answer goes out: in
 * this process's memory and, when Redis is configured, in Redis (`{rw:ID}` keys with that TTL),
 * so another web process knows as well. A lag-tolerant read by a marked principal goes to the
 * primary. Anything uncertain (Redis down or slow) also answers "recent": the primary is always
 * correct, a replica only faster.
 */
export class RecentWrites {
  private readonly memory = new Map<string, number>();
  private notes = 0;
  private readonly noteError: (e: unknown) => void;

  constructor(
    readonly windowMs: number,
    private readonly redis: Redis | Cluster | null,
    private readonly prefix: string,
    private readonly timeoutMs: number,
    log?: Logger,
  ) {
    this.noteError = throttledWarning(log, 'read-your-writes: Redis unavailable (reads of writers go to the primary)');
  }

  /** Marks these principals (ids like 'agent:ID', 'owner:ID') as having just written. */
  async note(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    const until = Date.now() + this.windowMs;
    for (const id of ids) this.memory.set(id, until);
    if (++this.notes % 1000 === 0) this.sweep();
    if (!this.redis) return;
    try {
      await this.bounded(Promise.all(ids.map((id) => this.redis!.set(this.key(id), '1', 'PX', this.windowMs))));
    } catch (e) {
      // Other processes may then serve this principal from a replica for a few seconds.
      this.noteError(e);
    }
  }

  /** Did any of these principals write within the window (or can it not be told)? */
  async recent(ids: readonly string[]): Promise<boolean> {
    if (!ids.length) return false;
    const now = Date.now();
    if (ids.some((id) => (this.memory.get(id) ?? 0) > now)) return true;
    if (!this.redis) return false;
    try {
      const found = await this.bounded(Promise.all(ids.map((id) => this.redis!.exists(this.key(id)))));
      return found.some((n) => n > 0);
    } catch (e) {
      this.noteError(e);
      return true;
    }
  }

  private key(id: string): string {
    return `${this.prefix}{rw:${id}}`;
  }

  private bounded<T>(p: Promise<T>): Promise<T> {
    return withDeadline(p, this.timeoutMs, 'Redis timed out');
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, until] of this.memory) if (until <= now) this.memory.delete(id);
  }

  async close(): Promise<void> {
    this.memory.clear();
    if (!this.redis) return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
