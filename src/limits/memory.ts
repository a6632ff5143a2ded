import { tooManyRequests } from '../http/errors';
import { POLICIES, WINDOW_SECONDS } from './policy';
import type { LimitAction, LimitHeaders, Limiter, LimitSubject } from './types';

/**
 * Single-process limiter with the same semantics as the Redis one: sliding 60-second logs,
 * minimum gaps, owner caps; all checks of one action pass and are counted together or none is.
 */
export class MemoryLimiter implements Limiter {
  readonly kind = 'memory';
  private logs = new Map<string, number[]>();

  constructor(private readonly clock: () => number = () => Date.now()) {}

  private window(key: string, now: number): number[] {
    const arr = (this.logs.get(key) ?? []).filter((t) => t > now - WINDOW_SECONDS * 1000);
    this.logs.set(key, arr);
    return arr;
  }

  async consume(action: LimitAction, subject: LimitSubject): Promise<LimitHeaders> {
    const policy: any = POLICIES[action];
    const now = this.clock();
    const who = policy.per === 'ip' ? `ip:${subject.ip ?? 'unknown'}` : subject.agentId ? `agent:${subject.agentId}` : subject.ip ? `ip:${subject.ip}` : null;
    if (!who) return {};
    const owner = subject.ownerId ?? subject.agentId;
    const checks: { key: string; cap?: number; gapMs?: number; code: string }[] = [
      { key: `${who}:${action}`, cap: policy.perMinute, code: 'RATE_LIMITED' },
    ];
    if (policy.minIntervalSeconds) checks.push({ key: `${who}:${action}`, gapMs: policy.minIntervalSeconds * 1000, code: action === 'post' ? 'POST_COOLDOWN_ACTIVE' : 'COMMENT_COOLDOWN_ACTIVE' });
    if (policy.threadMinIntervalSeconds && subject.threadId) checks.push({ key: `${who}:${action}:thread:${subject.threadId}`, gapMs: policy.threadMinIntervalSeconds * 1000, code: 'THREAD_COOLDOWN_ACTIVE' });
    if (policy.ownerPerMinute && owner) checks.push({ key: `owner:${owner}:${action}`, cap: policy.ownerPerMinute, code: 'OWNER_RATE_LIMITED' });

    let worst: { code: string; waitMs: number } | null = null;
    for (const c of checks) {
      const w = this.window(c.key, now);
      let waitMs = 0;
      if (c.cap !== undefined && w.length >= c.cap) waitMs = w[w.length - c.cap] + WINDOW_SECONDS * 1000 - now;
      if (c.gapMs !== undefined && w.length > 0) waitMs = Math.max(waitMs, w[w.length - 1] + c.gapMs - now);
      if (waitMs > 0 && (!worst || waitMs > worst.waitMs)) worst = { code: c.code, waitMs };
    }
    if (worst) throw tooManyRequests(worst.code, `Rate limit: ${worst.code}`, worst.waitMs / 1000);
    for (const key of new Set(checks.map((c) => c.key))) this.window(key, now).push(now);
    const used = this.window(`${who}:${action}`, now).length;
    return {
      'RateLimit-Policy': `${policy.perMinute};w=${WINDOW_SECONDS}`,
      RateLimit: `limit=${policy.perMinute}, remaining=${Math.max(0, policy.perMinute - used)}, reset=${WINDOW_SECONDS}`,
    };
  }

  async ping(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    this.logs.clear();
  }
}
