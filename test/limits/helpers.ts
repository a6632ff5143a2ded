import crypto from 'crypto';
import { expect } from 'chai';
import { AppError } from '../../src/errors';
import { MemoryLimiter } from '../../src/limits/memory';
import { RedisLimiter } from '../../src/limits/redis';
import type { Limiter } from '../../src/limits/types';
import { TEST_REDIS_URL } from '../helpers/context';
import { sharedRedisCluster } from '../helpers/redis-cluster';

/** A controllable milliseconds clock. */
export class Clock {
  constructor(public t = 1_750_000_000_000) {}
  readonly now = () => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export const id = () => crypto.randomUUID();

export type LimiterKind = 'redis' | 'cluster' | 'memory';

/** Where a Redis limiter connects: the machine's Redis, or the run's 3-master Redis Cluster. */
export async function redisTarget(
  kind: 'redis' | 'cluster',
): Promise<{ url: string } | { clusterNodes: { host: string; port: number }[] }> {
  return kind === 'redis' ? { url: TEST_REDIS_URL } : { clusterNodes: (await sharedRedisCluster()).nodes };
}

/**
 * Limiter under test against the real Redis, a real Redis Cluster (own random prefix) or in
 * memory, on `clock`.
 */
export async function makeLimiter(kind: LimiterKind, clock: Clock): Promise<Limiter> {
  const keyPrefix = `svc:test:limits:${crypto.randomBytes(5).toString('hex')}:`;
  if (kind === 'memory') return new MemoryLimiter({ keyPrefix, clock: clock.now });
  return whenReady(
    new RedisLimiter({ ...(await redisTarget(kind)), keyPrefix, clock: clock.now, commandTimeoutMs: 250 }),
  );
}

/**
 * Waits until a new limiter answers (its connections made: a cluster client's take a few round
 * trips), so a suite's first attempts meet its rules, not a connection still opening on a loaded
 * machine (which fails closed, as it should).
 */
export async function whenReady<L extends Limiter>(l: L): Promise<L> {
  for (let i = 0; ; i++) {
    try {
      await l.ping();
      return l;
    } catch (e) {
      if (i >= 200) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export type Outcome =
  | { ok: true; headers: Record<string, string> }
  | { ok: false; code: string; retryAfterSeconds: number; headers: Record<string, string> };

/** consume() as a value: accepted with headers, or the 429's code and Retry-After. */
export async function attempt(l: Limiter, ...args: Parameters<Limiter['consume']>): Promise<Outcome> {
  try {
    return { ok: true, headers: await l.consume(...args) };
  } catch (e) {
    if (!(e instanceof AppError) || e.status !== 429) throw e;
    const s = (e.extra as { retryAfterSeconds: number }).retryAfterSeconds;
    // Retry-After header equals the body's retryAfterSeconds, whole seconds ≥ 1.
    expect(e.headers['Retry-After']).to.equal(String(s));
    expect(Number.isInteger(s) && s >= 1).to.equal(true);
    return { ok: false, code: e.code, retryAfterSeconds: s, headers: e.headers };
  }
}

/** Largest number of times in any closed span [t, t + spanMs] (times ascending). */
export function maxInSpan(times: readonly number[], spanMs: number): number {
  let best = 0;
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    while (times[i] - times[j] > spanMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

export function minGap(times: readonly number[]): number {
  let g = Infinity;
  for (let i = 1; i < times.length; i++) g = Math.min(g, times[i] - times[i - 1]);
  return g;
}
