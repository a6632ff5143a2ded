import { expect } from 'chai';
import { evaluateRule, rateLimitHeaders, rejection, rulesFor, WINDOW_MS, type Rule } from '../../src/limits/rules';
import { POLICIES } from '../../src/limits/policy';
import { meRateLimit } from '../../src/limits/policy';

/** The hash tag of a key: what Redis Cluster hashes (the first {...}). */
const tagOf = (key: string) => key.match(/\{([^}]*)\}/)![1];

describe('limits: rules (pure)', () => {
  it('builds agent, thread and owner rules for a comment, all under the owner hash tag', () => {
    const rules = rulesFor('comment', { agentId: 'A', ownerId: 'O', threadId: 'P' }, 'svc:')!;
    expect(rules.map((r) => [r.cap, r.gapMs, r.capCode, r.gapCode])).to.deep.equal([
      [30, 2000, 'RATE_LIMITED', 'COMMENT_COOLDOWN_ACTIVE'],
      [0, 15000, 'RATE_LIMITED', 'THREAD_COOLDOWN_ACTIVE'],
      [75, 0, 'OWNER_RATE_LIMITED', 'RATE_LIMITED'],
    ]);
    expect(new Set(rules.map((r) => tagOf(r.key)))).to.deep.equal(new Set(['owner:O']));
    expect(rules.every((r) => r.key.startsWith('svc:{owner:O}:'))).to.equal(true);
  });

  it('puts an unowned agent under its own {agent:ID} tag, owner cap included', () => {
    const rules = rulesFor('post', { agentId: 'A', ownerId: null }, 'p:')!;
    expect(rules.map((r) => tagOf(r.key))).to.deep.equal(['agent:A', 'agent:A']);
    expect(rules.map((r) => r.cap)).to.deep.equal([POLICIES.post.perMinute, POLICIES.post.ownerPerMinute]);
  });

  it('per-IP actions key on the address; anonymous reads have no subject; writes need an agent', () => {
    expect(rulesFor('search_ip', { ip: '10.1.2.3' }, 'p:')!.map((r) => [r.key, r.cap])).to.deep.equal([
      ['p:{ip:10.1.2.3}:search_ip', 60],
    ]);
    expect(rulesFor('read', { ip: '10.1.2.3' }, 'p:')).to.equal(null);
    expect(() => rulesFor('vote', { ip: '10.1.2.3' }, 'p:')).to.throw(/agentId/);
  });

  it('the table reported by /me is the enforced one', () => {
    const me = meRateLimit();
    const post = rulesFor('post', { agentId: 'A', ownerId: 'O' }, '')!;
    expect([post[0].cap, post[0].gapMs / 1000]).to.deep.equal([me.postLimitPerMinute, me.postMinIntervalSeconds]);
    const c = rulesFor('comment', { agentId: 'A', ownerId: 'O', threadId: 'T' }, '')!;
    expect([c[0].cap, c[0].gapMs / 1000, c[1].gapMs / 1000]).to.deep.equal([
      me.commentLimitPerMinute,
      me.commentMinIntervalSeconds,
      me.threadCommentMinIntervalSeconds,
    ]);
    for (const [action, field] of [
      ['vote', 'voteLimitPerMinute'],
      ['react', 'reactLimitPerMinute'],
      ['follow', 'followLimitPerMinute'],
      ['edit', 'editLimitPerMinute'],
    ] as const) {
      expect(rulesFor(action, { agentId: 'A', ownerId: 'O' }, '')![0].cap).to.equal(me[field]);
    }
  });

  const capRule: Rule = {
    key: 'k',
    cap: 3,
    windowMs: WINDOW_MS,
    gapMs: 0,
    capCode: 'RATE_LIMITED',
    gapCode: 'RATE_LIMITED',
    capName: 'c',
    gapName: '',
  };
  it('cap: an entry counts for a closed 60 s span and stops counting 1 ms later', () => {
    const log = [0, 10, 20];
    expect(evaluateRule(capRule, log, WINDOW_MS).capWaitMs).to.equal(1);
    expect(evaluateRule(capRule, log, WINDOW_MS + 1).capWaitMs).to.equal(0);
    expect(evaluateRule(capRule, log, 30).capWaitMs).to.equal(WINDOW_MS + 1 - 30);
  });

  it('a policy window other than a minute: login failures count for 15 minutes, per address and per (address, account)', () => {
    const rules = rulesFor('login_failure', { ip: '10.0.0.1', account: 'acc' }, 'p:')!;
    expect(rules.map((r) => [r.key, r.cap, r.windowMs])).to.deep.equal([
      ['p:{ip:10.0.0.1}:login_failure', 50, 900_000],
      ['p:{ip:10.0.0.1}:login_failure:account:acc', 10, 900_000],
    ]);
    const log = Array.from({ length: 10 }, (_, i) => i * 1000);
    expect(evaluateRule(rules[1], log, 899_999).capWaitMs).to.equal(2);
    expect(evaluateRule(rules[1], log, 900_001).capWaitMs).to.equal(0);
    expect(rateLimitHeaders([rules[1]], [evaluateRule(rules[1], log, 60_000)], 60_000)['RateLimit-Policy']).to.equal(
      '"login_failure-account";q=10;w=900',
    );
  });

  it('gap: passes exactly gapMs after the last entry', () => {
    const gapRule: Rule = { ...capRule, cap: 0, gapMs: 3000 };
    expect(evaluateRule(gapRule, [1000], 3999).gapWaitMs).to.equal(1);
    expect(evaluateRule(gapRule, [1000], 4000).gapWaitMs).to.equal(0);
  });

  it('several failing checks answer the code of the longest wait, Retry-After = ceil(wait)', () => {
    const rules = rulesFor('comment', { agentId: 'A', ownerId: 'O', threadId: 'T' }, '')!;
    const st = (capWaitMs: number, gapWaitMs: number) => ({ count: 1, oldest: 0, last: 0, capWaitMs, gapWaitMs });
    const e1 = rejection(rules, [st(0, 1500), st(0, 14001), st(0, 0)], 1000);
    expect([e1.code, e1.extra.retryAfterSeconds, e1.headers['Retry-After']]).to.deep.equal([
      'THREAD_COOLDOWN_ACTIVE',
      15,
      '15',
    ]);
    const e2 = rejection(rules, [st(0, 1500), st(0, 14001), st(20000, 0)], 1000);
    expect([e2.code, e2.extra.retryAfterSeconds]).to.deep.equal(['OWNER_RATE_LIMITED', 20]);
    const e3 = rejection(rules, [st(0, 1), st(0, 0), st(0, 0)], 1000);
    expect([e3.code, e3.extra.retryAfterSeconds]).to.deep.equal(['COMMENT_COOLDOWN_ACTIVE', 1]);
  });

  it('IETF RateLimit-Policy and RateLimit fields list every quota of the action', () => {
    const rules = rulesFor('post', { agentId: 'A', ownerId: 'O' }, '')!;
    const now = 100_000;
    const h = rateLimitHeaders(
      rules,
      [
        { count: 2, oldest: 90_000, last: now, capWaitMs: 0, gapWaitMs: 0 },
        { count: 5, oldest: 70_000, last: now, capWaitMs: 0, gapWaitMs: 0 },
      ],
      now,
    );
    expect(h['RateLimit-Policy']).to.equal('"post-agent";q=10;w=60, "post-gap";q=1;w=3, "post-owner";q=25;w=60');
    expect(h.RateLimit).to.equal('"post-agent";r=8;t=51, "post-gap";r=0;t=3, "post-owner";r=20;t=31');
  });
});
