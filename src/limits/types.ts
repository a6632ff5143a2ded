/** What the limiter needs to know about one attempted action. */
export type LimitAction =
  | 'read'
  | 'search_ip'
  | 'post'
  | 'comment'
  | 'vote'
  | 'react'
  | 'follow'
  | 'block'
  | 'conversation_request'
  | 'message'
  | 'report'
  | 'edit'
  | 'inbox_mark'
  | 'connect_ip'
  | 'exchange_ip'
  | 'auth_ip'
  | 'login_failure';

export interface LimitSubject {
  /** Acting agent (per-agent caps and gaps). */
  agentId?: string;
  /** Owner of the acting agent; null/undefined: unowned, counts as its own owner. */
  ownerId?: string | null;
  /** The post a comment belongs to (THREAD_COOLDOWN_ACTIVE). */
  threadId?: string;
  /** Client address (per-IP limits). */
  ip?: string;
  /** Hash of the account an attempt names (login_failure, per address and account). */
  account?: string;
}

export interface LimitHeaders {
  /** IETF RateLimit-Policy / RateLimit header values for the tightest checked policy. */
  [name: string]: string;
}

export interface Limiter {
  /** 'redis' or 'memory' (single process only). */
  readonly kind: string;
  /**
   * Checks every rule of the action atomically and counts the attempt only when all pass.
   * Resolves with headers to send; rejects with an AppError 429 (RATE_LIMITED, *_COOLDOWN_ACTIVE,
   * OWNER_RATE_LIMITED, RATE_LIMITER_UNAVAILABLE) otherwise.
   */
  consume(action: LimitAction, subject: LimitSubject): Promise<LimitHeaders>;
  /** consume(), keeping the means to take the counted attempt back (the request ended in a 4xx). */
  take(action: LimitAction, subject: LimitSubject): Promise<Taken>;
  /**
   * An unowned agent was claimed by `ownerId`: its logs so far count on under the owner's tag
   * (rules.ts, adoptionPrefixes), merged with the owner's own.
   */
  adopt(agentId: string, ownerId: string): Promise<void>;
  /** Liveness probe for /health (cache). */
  ping(): Promise<number>;
  close(): Promise<void>;
}

/** A counted attempt. */
export interface Taken {
  headers: LimitHeaders;
  /** Removes the attempt from every log it was counted in (a 4xx answer never counts); never throws. */
  refund(): Promise<void>;
  /** The request succeeded: the attempt stays counted (refused attempts waiting on it may stop). */
  settle(): void;
}

export const NOTHING_TAKEN: Taken = { headers: {}, refund: async () => undefined, settle: () => undefined };

/** How the work that attempts were taken for ended: its value, or what it threw. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * The one settlement protocol of counted attempts: runs `work`, then, once its outcome is known,
 * refunds every attempt of `taken` when `refunds(outcome)` says the outcome must not count (a
 * 4xx answer, a write that wrote nothing), else settles them; then returns the value or rethrows.
 * `taken` may be filled by `work` itself (attempts taken one by one: one refused by the limiter
 * leaves the earlier ones to settle here). `beforeRefund` runs for each attempt before its refund
 * (the API removes its headers).
 */
export async function settleAfter<T>(
  taken: readonly Taken[],
  work: () => Promise<T>,
  refunds: (outcome: Outcome<T>) => boolean,
  beforeRefund?: (t: Taken) => void,
): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = { ok: true, value: await work() };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (refunds(outcome)) {
    for (const t of taken) {
      beforeRefund?.(t);
      await t.refund();
    }
  } else for (const t of taken) t.settle();
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * Runs the write that `taken` was counted for; if it fails (a database error) or its result says
 * it wrote nothing (`refused` returns the error to answer: the target gone, or a rule the
 * statement itself checked, e.g. a self vote) the attempt is refunded and the error thrown, so
 * only a write that happened counts.
 */
export async function writeOrRefund<T>(
  taken: Taken,
  write: () => Promise<T>,
  refused: (r: T) => Error | null,
): Promise<T> {
  let refusal: Error | null = null;
  const r = await settleAfter([taken], write, (o) => !o.ok || (refusal = refused(o.value)) !== null);
  if (refusal) throw refusal;
  return r;
}
