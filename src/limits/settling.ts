import { AppError, tooManyRequests } from '../errors';
import { rulesFor } from './rules';
import type { LimitAction, LimitHeaders, Limiter, LimitSubject, Taken } from './types';

/**
 * Longest a refused attempt waits for the attempts of this process that hold slots in its logs
 * (they answer within one statement; this only bounds a stuck one).
 */
export const SETTLE_WAIT_MS = 1000;
/**
 * How long an attempt counts as in flight. Some run longer than the wait (a login's password
 * hash in a burst of logins on a small machine): a refusal past the wait while they still hold
 * slots answers Retry-After 1, since those slots may yet come back, not the window's full wait.
 * Past this, a request that never settled is forgotten (bounded memory).
 */
export const HOLDER_STALE_MS = 10_000;

interface Holder {
  at: number;
  done: Promise<void>;
  resolve: () => void;
}

/**
 * An attempt is counted before its request runs and taken back if the request ends in a 4xx
 * (a refused request never counts toward a limit). Until that answer, the refused request holds a
 * slot it will return: in a burst that mixes refused and valid requests of one agent (self votes
 * and votes, say) the valid ones would meet a full log and wait out a whole window for nothing.
 *
 * This limiter remembers which attempts of this process are still in flight, per rule log. An
 * attempt refused while some of them hold slots in its logs waits until they settle (taken back,
 * or kept when their request succeeded; SETTLE_WAIT_MS at most) and asks again, as long as
 * holders remain. Only 429s of the rules themselves wait; RATE_LIMITER_UNAVAILABLE never does.
 * Across processes (several web instances) a slot held elsewhere is not seen: the 429 stands.
 */
export class SettlingLimiter implements Limiter {
  private readonly holders = new Map<string, Set<Holder>>();
  private tracked = 0;

  constructor(readonly inner: Limiter) {}

  /** Real elapsed time, whatever clock the limits themselves run on (tests fix theirs). */
  private clock(): number {
    return performance.now();
  }

  get kind(): string {
    return this.inner.kind;
  }

  async consume(action: LimitAction, subject: LimitSubject): Promise<LimitHeaders> {
    const t = await this.take(action, subject);
    t.settle();
    return t.headers;
  }

  async take(action: LimitAction, subject: LimitSubject): Promise<Taken> {
    const keys = (rulesFor(action, subject, '') ?? []).map((r) => r.key);
    if (keys.length === 0) return this.inner.take(action, subject);
    const deadline = this.clock() + SETTLE_WAIT_MS;
    for (;;) {
      try {
        return this.track(keys, await this.inner.take(action, subject));
      } catch (e) {
        const held = isRuleRefusal(e) ? this.heldIn(keys) : [];
        if (held.length === 0) throw e;
        const waitMs = deadline - this.clock();
        if (waitMs <= 0) throw retrySoon(e as AppError);
        await settledOrTimeout(held, waitMs);
      }
    }
  }

  adopt(agentId: string, ownerId: string): Promise<void> {
    return this.inner.adopt(agentId, ownerId);
  }

  ping(): Promise<number> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    this.holders.clear();
    return this.inner.close();
  }

  /** Holders of slots in these logs (those past HOLDER_STALE_MS are dropped: requests that never settled). */
  private heldIn(keys: string[]): Promise<void>[] {
    const stale = this.clock() - HOLDER_STALE_MS;
    return keys.flatMap((k) => [...this.prune(k, stale)].map((h) => h.done));
  }

  /** The live holders of one log, after dropping those that started before `stale`. */
  private prune(key: string, stale: number): Set<Holder> {
    const set = this.holders.get(key);
    if (!set) return new Set();
    for (const h of set) if (h.at < stale) set.delete(h);
    if (set.size === 0) this.holders.delete(key);
    return set;
  }

  private track(keys: string[], t: Taken): Taken {
    if (++this.tracked % 1000 === 0) this.sweep();
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const h: Holder = { at: this.clock(), done, resolve };
    for (const k of keys) {
      let set = this.holders.get(k);
      if (!set) this.holders.set(k, (set = new Set()));
      set.add(h);
    }
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      for (const k of keys) {
        const set = this.holders.get(k);
        set?.delete(h);
        if (set?.size === 0) this.holders.delete(k);
      }
      h.resolve();
    };
    return {
      headers: t.headers,
      // The slot is free once the inner refund is done: only then may a waiter ask again.
      refund: async () => {
        await t.refund();
        settle();
      },
      settle,
    };
  }

  /** Bounded memory: holders of requests that never settled go once they are stale. */
  private sweep(): void {
    const stale = this.clock() - HOLDER_STALE_MS;
    for (const k of [...this.holders.keys()]) this.prune(k, stale);
  }
}

/** The same refusal, to be asked again in a second (slots it met may still be taken back). */
function retrySoon(e: AppError): AppError {
  return tooManyRequests(e.code, 1, e.headers);
}

function isRuleRefusal(e: unknown): boolean {
  return e instanceof AppError && e.status === 429 && e.code !== 'RATE_LIMITER_UNAVAILABLE';
}

async function settledOrTimeout(held: Promise<void>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(held), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
