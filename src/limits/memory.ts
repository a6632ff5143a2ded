import { POLICIES, windowMsOf, type Policy } from './policy';
import { adoptionPrefixes, evaluateRule, horizonMs, passes, rateLimitHeaders, rejection, rulesFor } from './rules';
import {
  NOTHING_TAKEN,
  type LimitAction,
  type LimitHeaders,
  type Limiter,
  type LimitSubject,
  type Taken,
} from './types';

/** A log idle for longer than the longest window (and gap) of any policy decides nothing. */
const MAX_HORIZON_MS = Math.max(
  ...Object.values(POLICIES).map((p: Policy) =>
    Math.max(windowMsOf(p), (p.minIntervalSeconds ?? 0) * 1000, (p.threadMinIntervalSeconds ?? 0) * 1000),
  ),
);

export interface MemoryLimiterOptions {
  /** Milliseconds clock (tests move it); default Date.now. */
  clock?: () => number;
  keyPrefix?: string;
}

/**
 * Single-process limiter for `npm start` without REDIS_URL. Same rules and the same decision
 * code (rules.ts) as the Redis limiter; correct only while one process serves all traffic.
 */
export class MemoryLimiter implements Limiter {
  readonly kind = 'memory';
  private logs = new Map<string, number[]>();
  private readonly clock: () => number;
  private readonly prefix: string;
  private sweepAt = 0;

  constructor(opts: MemoryLimiterOptions = {}) {
    this.clock = opts.clock ?? (() => Date.now());
    this.prefix = opts.keyPrefix ?? 'svc:';
  }

  async consume(action: LimitAction, subject: LimitSubject): Promise<LimitHeaders> {
    return (await this.take(action, subject)).headers;
  }

  async take(action: LimitAction, subject: LimitSubject): Promise<Taken> {
    const rules = rulesFor(action, subject, this.prefix);
    if (!rules) return NOTHING_TAKEN;
    const now = this.clock();
    const logs = rules.map((r) => {
      // Trim like the Redis script does (entries older than the rule's horizon are irrelevant).
      const log = (this.logs.get(r.key) ?? []).filter((t) => t >= now - horizonMs(r));
      this.logs.set(r.key, log);
      return log;
    });
    const before = rules.map((r, i) => evaluateRule(r, logs[i], now));
    if (!before.every(passes)) throw rejection(rules, before, now);
    for (const log of logs) {
      // Keep each log sorted even if the clock steps back.
      let i = log.length;
      while (i > 0 && log[i - 1] > now) i--;
      log.splice(i, 0, now);
    }
    this.sweep(now);
    let refunded = false;
    const refund = async () => {
      if (refunded) return;
      refunded = true;
      for (const r of rules) {
        const log = this.logs.get(r.key);
        const i = log ? log.lastIndexOf(now) : -1;
        if (i >= 0) log!.splice(i, 1);
      }
    };
    return {
      headers: rateLimitHeaders(
        rules,
        rules.map((r, i) => evaluateRule(r, logs[i], now)),
        now,
      ),
      refund,
      settle: NOTHING_TAKEN.settle,
    };
  }

  async adopt(agentId: string, ownerId: string): Promise<void> {
    const { from, to } = adoptionPrefixes(this.prefix, agentId, ownerId);
    for (const [key, log] of [...this.logs]) {
      if (!key.startsWith(from)) continue;
      const target = to + key.slice(from.length);
      this.logs.set(
        target,
        [...(this.logs.get(target) ?? []), ...log].sort((a, b) => a - b),
      );
      this.logs.delete(key);
    }
  }

  /** Drops idle logs now and then so memory stays bounded by recent activity. */
  private sweep(now: number): void {
    if (now - this.sweepAt < 60_000 && this.logs.size < 100_000) return;
    this.sweepAt = now;
    for (const [k, log] of this.logs)
      if (!log.length || log[log.length - 1] < now - MAX_HORIZON_MS) this.logs.delete(k);
  }

  async ping(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}
