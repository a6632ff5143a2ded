import crypto from 'crypto';
import { expect } from 'chai';
import { AppError } from '../../src/errors';
import { MemoryLimiter } from '../../src/limits/memory';
import { RedisLimiter } from '../../src/limits/redis';
import type { Limiter } from '../../src/limits/types';
import { TEST_REDIS_URL } from '../helpers/context';

/** A controllable milliseconds clock. */
export class Clock {
  constructor(public t = 1_750_000_000_000) {}
  readonly now = () => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export const id = () => crypto.randomUUID();

/** Limiter under test against the real Redis (own random prefix) or in memory, on `clock`. */
export function makeLimiter(kind: 'redis' | 'memory', clock: Clock): Limiter {
  const keyPrefix = `svc:test:limits:${crypto.randomBytes(5).toString('hex')}:`;
  return kind === 'redis'
    ? new RedisLimiter({ url: TEST_REDIS_URL, keyPrefix, clock: clock.now, commandTimeoutMs: 250 })
    : new MemoryLimiter({ keyPrefix, clock: clock.now });
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
