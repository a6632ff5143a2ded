/**
 * Pure decision logic shared by the Redis and the in-memory limiter, so both enforce exactly
 * the same semantics (the Lua script in redis.ts mirrors `evaluateRule` line for line).
 *
 * Semantics, in integer milliseconds:
 * - A rule owns one log of accepted timestamps (one key).
 * - Cap: an entry t counts at time `now` while `t >= now - windowMs` (a closed span: 60 s unless the
 *   policy sets another), so any such span holds at most `cap` accepted actions. When `count >= cap`, the attempt
 *   may pass once the entry that would be the cap-th newest has left: wait = e + windowMs + 1 - now.
 * - Gap: the attempt passes when `now - last >= gapMs`: wait = last + gapMs - now.
 * - All rules of one action pass and are recorded together, or none is recorded.
 * - On rejection the code of the rule with the longest wait is answered, with
 *   Retry-After = ceil(wait / 1000) ≥ 1, so a client that waits exactly that long succeeds.
 */
import { tooManyRequests, AppError, type ErrorCode } from '../errors';
import { POLICIES, WINDOW_SECONDS, windowMsOf, type Policy } from './policy';
import type { LimitAction, LimitHeaders, LimitSubject } from './types';

export const WINDOW_MS = WINDOW_SECONDS * 1000;

export interface Rule {
  /** Redis key (or memory map key) of this rule's log; one rule per key. */
  key: string;
  /** Sliding-window cap (0: none). */
  cap: number;
  /** Span of the cap's sliding window (60 s unless the policy says otherwise). */
  windowMs: number;
  /** Minimum gap between accepted entries (0: none). */
  gapMs: number;
  /** 429 codes when the cap / the gap has the longest wait. */
  capCode: ErrorCode;
  gapCode: ErrorCode;
  /** Item names in the IETF RateLimit / RateLimit-Policy fields. */
  capName: string;
  gapName: string;
}

/** How long a log must be kept to decide its rule. */
export function horizonMs(rule: Rule): number {
  return Math.max(rule.cap > 0 ? rule.windowMs : 0, rule.gapMs);
}

/** Per-rule facts of one decision (what the 429 code and the headers are built from). */
export interface RuleState {
  /** Entries counting in the window (after recording, when accepted). */
  count: number;
  /** Oldest entry counting in the window, or -1. */
  oldest: number;
  /** Newest entry, or -1. */
  last: number;
  /** 0 when the cap passes, else milliseconds until it would. */
  capWaitMs: number;
  /** 0 when the gap passes, else milliseconds until it would. */
  gapWaitMs: number;
}

/**
 * State of one rule against its log (ascending timestamps). Mirrored by the Lua script: keep
 * the two in step.
 */
export function evaluateRule(rule: Rule, log: readonly number[], now: number): RuleState {
  const inWindow = log.filter((t) => t >= now - rule.windowMs);
  const last = log.length ? log[log.length - 1] : -1;
  let capWaitMs = 0;
  let gapWaitMs = 0;
  if (rule.cap > 0 && inWindow.length >= rule.cap)
    capWaitMs = inWindow[inWindow.length - rule.cap] + rule.windowMs + 1 - now;
  if (rule.gapMs > 0 && last >= 0) gapWaitMs = Math.max(0, last + rule.gapMs - now);
  return {
    count: inWindow.length,
    oldest: inWindow.length ? inWindow[0] : -1,
    last,
    capWaitMs: Math.max(0, capWaitMs),
    gapWaitMs,
  };
}

export const passes = (s: RuleState) => s.capWaitMs <= 0 && s.gapWaitMs <= 0;

const ceilSeconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** IETF fields (draft-ietf-httpapi-ratelimit-headers, structured-field form) for one action. */
export function rateLimitHeaders(rules: readonly Rule[], states: readonly RuleState[], now: number): LimitHeaders {
  const policy: string[] = [];
  const current: string[] = [];
  rules.forEach((r, i) => {
    const s = states[i];
    if (r.cap > 0) {
      policy.push(`"${r.capName}";q=${r.cap};w=${r.windowMs / 1000}`);
      // Sliding window: one unit of quota returns when the oldest counted entry leaves.
      const reset = s.count > 0 ? ceilSeconds(s.oldest + r.windowMs + 1 - now) : 0;
      current.push(`"${r.capName}";r=${Math.max(0, r.cap - s.count)};t=${Math.max(reset, ceilSeconds(s.capWaitMs))}`);
    }
    if (r.gapMs > 0) {
      // A minimum gap is a quota of 1 per gap.
      policy.push(`"${r.gapName}";q=1;w=${Math.ceil(r.gapMs / 1000)}`);
      const left = s.last >= 0 ? s.last + r.gapMs - now : 0;
      current.push(`"${r.gapName}";r=${left > 0 ? 0 : 1};t=${ceilSeconds(Math.max(0, left))}`);
    }
  });
  return { 'RateLimit-Policy': policy.join(', '), RateLimit: current.join(', ') };
}

/** The 429 for a rejected attempt: the check with the longest wait names the code. */
export function rejection(rules: readonly Rule[], states: readonly RuleState[], now: number): AppError {
  let code: ErrorCode = 'RATE_LIMITED';
  let wait = 0;
  rules.forEach((r, i) => {
    if (states[i].capWaitMs > wait) [code, wait] = [r.capCode, states[i].capWaitMs];
    if (states[i].gapWaitMs > wait) [code, wait] = [r.gapCode, states[i].gapWaitMs];
  });
  return tooManyRequests(code, Math.max(1, Math.ceil(wait / 1000)), rateLimitHeaders(rules, states, now));
}

/** Error for any limiter failure on an action that fails closed. */
export function limiterUnavailable(): AppError {
  return tooManyRequests('RATE_LIMITER_UNAVAILABLE', UNAVAILABLE_RETRY_SECONDS);
}
export const UNAVAILABLE_RETRY_SECONDS = 2;

function gapCode(action: LimitAction): ErrorCode {
  return action === 'post' ? 'POST_COOLDOWN_ACTIVE' : action === 'comment' ? 'COMMENT_COOLDOWN_ACTIVE' : 'RATE_LIMITED';
}

/**
 * The rules of one attempted action. All keys of one owner share the Redis Cluster hash tag
 * `{owner:ID}` (an unowned agent: `{agent:ID}`; per-IP limits: `{ip:ADDR}`), so the one script
 * of an action touches one slot. Returns null when the action has no subject to limit
 * (anonymous reads: the per-agent read limit needs an agent).
 */
export function rulesFor(action: LimitAction, subject: LimitSubject, prefix: string): Rule[] | null {
  const policy: Policy = POLICIES[action];
  const windowMs = windowMsOf(policy);
  if (policy.per === 'ip') {
    const ip = subject.ip || 'unknown';
    const base = `${prefix}{ip:${ip}}:${action}`;
    const rules: Rule[] = [
      {
        key: base,
        cap: policy.perMinute,
        windowMs,
        gapMs: 0,
        capCode: 'RATE_LIMITED',
        gapCode: 'RATE_LIMITED',
        capName: action,
        gapName: '',
      },
    ];
    if (policy.perAccount && subject.account) {
      rules.push({
        key: `${base}:account:${subject.account}`,
        cap: policy.perAccount,
        windowMs,
        gapMs: 0,
        capCode: 'RATE_LIMITED',
        gapCode: 'RATE_LIMITED',
        capName: `${action}-account`,
        gapName: '',
      });
    }
    return rules;
  }
  if (!subject.agentId) {
    if (isFailOpen(action)) return null;
    throw new Error(`rate limiter: action ${action} needs an agentId`);
  }
  const tag = agentTag(subject.agentId, subject.ownerId);
  const base = `${prefix}${tag}:agent:${subject.agentId}:${action}`;
  const rules: Rule[] = [
    {
      key: base,
      cap: policy.perMinute,
      windowMs,
      gapMs: (policy.minIntervalSeconds ?? 0) * 1000,
      capCode: 'RATE_LIMITED',
      gapCode: gapCode(action),
      capName: `${action}-agent`,
      gapName: `${action}-gap`,
    },
  ];
  if (policy.threadMinIntervalSeconds && subject.threadId) {
    const gapMs = policy.threadMinIntervalSeconds * 1000;
    rules.push({
      key: `${base}:thread:${subject.threadId}`,
      cap: 0,
      windowMs,
      gapMs,
      capCode: 'RATE_LIMITED',
      gapCode: 'THREAD_COOLDOWN_ACTIVE',
      capName: '',
      gapName: `${action}-thread`,
    });
  }
  if (policy.ownerPerMinute) {
    // An unowned agent is its own owner.
    rules.push({
      key: `${prefix}${tag}:owner:${action}`,
      cap: policy.ownerPerMinute,
      windowMs,
      gapMs: 0,
      capCode: 'OWNER_RATE_LIMITED',
      gapCode: 'RATE_LIMITED',
      capName: `${action}-owner`,
      gapName: '',
    });
  }
  return rules;
}

/** The hash tag of an agent's logs: its owner's, or its own while it has none. */
function agentTag(agentId: string, ownerId?: string | null): string {
  return ownerId ? `{owner:${ownerId}}` : `{agent:${agentId}}`;
}

/**
 * A claim moves an agent from its own tag to its new owner's. Its logs (its caps and gaps, its
 * threads, and the owner-wide logs an unowned agent keeps as its own owner) start with the
 * returned `from` and continue under `to`, so the history follows it: claiming an agent must not
 * reset its limits.
 */
export function adoptionPrefixes(prefix: string, agentId: string, ownerId: string): { from: string; to: string } {
  return { from: `${prefix}${agentTag(agentId)}:`, to: `${prefix}${agentTag(agentId, ownerId)}:` };
}

/** Reads keep working while the limiter is down; everything else fails closed. */
export function isFailOpen(action: LimitAction): boolean {
  return (POLICIES[action] as Policy).failOpen === true;
}
