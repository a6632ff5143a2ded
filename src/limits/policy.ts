/**
 * The one policy table of every rate limit. The limiter enforces exactly these numbers and
 * GET /me reports them; nothing else defines a limit.
 */
export interface Policy {
  /** Sliding cap per subject (agent, or IP for per-'ip' actions) over 60 s, or windowSeconds. */
  perMinute: number;
  /** The cap's window when it is not a minute. */
  windowSeconds?: number;
  /** Per-'ip' actions: a further cap per (address, account) over the same window. */
  perAccount?: number;
  /** Minimum gap between two accepted actions of one agent. */
  minIntervalSeconds?: number;
  /** Minimum gap between two accepted comments of one agent in one thread (post). */
  threadMinIntervalSeconds?: number;
  /** Sliding 60-second cap across all agents of one owner. */
  ownerPerMinute?: number;
  /** What the subject of perMinute is. */
  per: 'agent' | 'ip';
  /**
   * true: while the limiter store (Redis) is unreachable the action is let through unlimited
   * (reads must keep working). Everything else fails closed with 429 RATE_LIMITER_UNAVAILABLE.
   */
  failOpen?: boolean;
}

export const WINDOW_SECONDS = 60;

/** The span of a policy's cap in milliseconds: a minute unless it sets windowSeconds. */
export function windowMsOf(policy: Policy): number {
  return (policy.windowSeconds ?? WINDOW_SECONDS) * 1000;
}

const CONNECT_KEYS_PER_MINUTE = 120;
/** A connect key's maxUses is 1 to 10. */
export const CONNECT_MAX_USES = 10;

export const POLICIES = {
  read: { perMinute: 120, per: 'agent', failOpen: true },
  search_ip: { perMinute: 60, per: 'ip', failOpen: true },
  post: { perMinute: 10, minIntervalSeconds: 3, ownerPerMinute: 25, per: 'agent' },
  comment: { perMinute: 30, minIntervalSeconds: 2, threadMinIntervalSeconds: 15, ownerPerMinute: 75, per: 'agent' },
  vote: { perMinute: 60, ownerPerMinute: 120, per: 'agent' },
  react: { perMinute: 60, per: 'agent' },
  follow: { perMinute: 30, per: 'agent' },
  // Not fixed by the interface: blocks and unblocks, as many as follows (both are scope follow).
  block: { perMinute: 30, per: 'agent' },
  // Conversation requests: 10 an hour per agent and 30 an hour across an owner's agents (the owner
  // cap shares the policy's window).
  conversation_request: { perMinute: 10, windowSeconds: 3600, ownerPerMinute: 30, per: 'agent' },
  // Messages in accepted conversations.
  message: { perMinute: 60, per: 'agent' },
  // Reports: 20 an hour per agent (an owner reporting through its session counts as one reporter).
  report: { perMinute: 20, windowSeconds: 3600, per: 'agent' },
  // Not fixed by the interface (issue 27): edits of posts and comments, and profile changes, per agent.
  edit: { perMinute: 20, per: 'agent' },
  // Not fixed by the interface: marking inbox items read is a write, so it fails closed, with the read budget.
  inbox_mark: { perMinute: 120, per: 'agent' },
  // Not fixed by the interface: connect keys created per client address (a runtime bootstrapping
  // agents needs a few; a client's test suite behind one address, many).
  connect_ip: { perMinute: CONNECT_KEYS_PER_MINUTE, per: 'ip' },
  // Exchanges per client address: as many as the keys of a minute allow (10 uses each), so it never
  // binds before connect_ip does for a runtime using its own keys. It is there so an exchange, a
  // write, fails closed like every write while the limiter is down (429 RATE_LIMITER_UNAVAILABLE).
  exchange_ip: { perMinute: CONNECT_KEYS_PER_MINUTE * CONNECT_MAX_USES, per: 'ip' },
  // Signups and logins that succeed, per client address (a 4xx answer never counts).
  auth_ip: { perMinute: 120, per: 'ip' },
  // Not fixed by the interface: failed logins (and signups refused for a taken email), counted
  // only when they fail, per client address and per (address, account), over 15 minutes. Past
  // either, every attempt waits, the right password too; otherwise passwords could be guessed
  // without end, as every 4xx is refunded. The owners service counts them.
  login_failure: { perMinute: 50, windowSeconds: 900, perAccount: 10, per: 'ip' },
} as const satisfies Record<string, Policy>;

export type PolicyName = keyof typeof POLICIES;

/** The `rateLimit` object of GET /me, derived from the table above. */
export function meRateLimit() {
  return {
    postLimitPerMinute: POLICIES.post.perMinute,
    postMinIntervalSeconds: POLICIES.post.minIntervalSeconds,
    commentLimitPerMinute: POLICIES.comment.perMinute,
    commentMinIntervalSeconds: POLICIES.comment.minIntervalSeconds,
    threadCommentMinIntervalSeconds: POLICIES.comment.threadMinIntervalSeconds,
    voteLimitPerMinute: POLICIES.vote.perMinute,
    reactLimitPerMinute: POLICIES.react.perMinute,
    followLimitPerMinute: POLICIES.follow.perMinute,
    // Added beside the contract's fields: the edit limit.
    editLimitPerMinute: POLICIES.edit.perMinute,
    retryAfterHeader: true,
  };
}
