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
  let r: T;
  try {
    r = await write();
  } catch (err) {
    await taken.refund();
    throw err;
  }
  const refusal = refused(r);
  if (refusal) {
    await taken.refund();
    throw refusal;
  }
  taken.settle();
  return r;
}
