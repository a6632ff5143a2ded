import { expect } from 'chai';
import fc from 'fast-check';
import { POLICIES } from '../../src/limits/policy';
import type { Limiter } from '../../src/limits/types';
import { attempt, Clock, id, makeLimiter, maxInSpan, minGap, type Outcome } from './helpers';

const SPAN = 60_000;
/** Delays between attempts: mostly short (bursts), sometimes long (windows roll over). */
const delay = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 1500 }) },
  { weight: 2, arbitrary: fc.integer({ min: 1500, max: 8000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 8000, max: 70_000 }) },
);

// 'cluster': the same properties on a real 3-master Redis Cluster (test/helpers/redis-cluster.ts).
for (const kind of ['redis', 'cluster', 'memory'] as const) {
  describe(`limits: properties (${kind}, controllable clock)`, function () {
    this.timeout(60_000);
    let clock: Clock;
    let limiter: Limiter;
    beforeEach(async () => {
      clock = new Clock();
      limiter = await makeLimiter(kind, clock);
    });
    afterEach(() => limiter.close());

    it('posts: no closed 60 s span accepts more than 10, accepted posts are ≥ 3 s apart', async () => {
      const seen = new Set<string>();
      await fc.assert(
        fc.asyncProperty(fc.array(delay, { minLength: 1, maxLength: 80, size: 'max' }), async (delays) => {
          const subject = { agentId: id(), ownerId: id() };
          const accepted: number[] = [];
          for (const d of delays) {
            clock.advance(d);
            const o = await attempt(limiter, 'post', subject);
            if (o.ok) accepted.push(clock.t);
            else {
              expect(o.code).to.be.oneOf(['RATE_LIMITED', 'POST_COOLDOWN_ACTIVE']);
              seen.add(o.code);
            }
          }
          expect(maxInSpan(accepted, SPAN)).to.be.at.most(POLICIES.post.perMinute);
          expect(minGap(accepted)).to.be.at.least(3000);
        }),
        // Besides the random runs, one steady burst (a post every 3 s, each followed by an
        // immediate retry) that certainly meets the gap and then the cap, whatever the seed.
        { numRuns: 40, examples: [[Array.from({ length: 30 }, (_, i) => (i % 2 ? 0 : 3000))]] },
      );
      // The traffic really reaches both the cap and the gap.
      expect([...seen].sort()).to.deep.equal(['POST_COOLDOWN_ACTIVE', 'RATE_LIMITED']);
    });

    it('comments: per-agent cap and gap, and ≥ 15 s between comments of one agent in one thread', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), delay), { minLength: 1, maxLength: 80, size: 'max' }),
          async (steps) => {
            const agentId = id();
            const ownerId = id();
            const threads = [id(), id(), id()];
            const all: number[] = [];
            const perThread = new Map<string, number[]>();
            for (const [ti, d] of steps) {
              clock.advance(d);
              const o = await attempt(limiter, 'comment', { agentId, ownerId, threadId: threads[ti] });
              if (!o.ok) {
                expect(o.code).to.be.oneOf(['RATE_LIMITED', 'COMMENT_COOLDOWN_ACTIVE', 'THREAD_COOLDOWN_ACTIVE']);
                continue;
              }
              all.push(clock.t);
              perThread.set(threads[ti], [...(perThread.get(threads[ti]) ?? []), clock.t]);
            }
            expect(maxInSpan(all, SPAN)).to.be.at.most(POLICIES.comment.perMinute);
            expect(minGap(all)).to.be.at.least(2000);
            for (const times of perThread.values()) expect(minGap(times)).to.be.at.least(15_000);
          },
        ),
        { numRuns: 30 },
      );
    });

    it('owner cap: across many agents of one owner no 60 s span accepts more than the owner cap', async () => {
      // Votes: 60 per agent, 120 per owner, no gap, so bursts across 2-6 agents hit the owner cap.
      // Steps mostly 0-300 ms apart, some up to 1.2 s: 150-400 attempts over about 40-100 s, so
      // most runs fill the cap at least once (with every step up to 1.2 s apart, some seeds
      // filled it in no run at all).
      let ownerCapReached = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 6 }),
          fc.array(
            fc.tuple(
              fc.nat(),
              fc.oneof(
                { arbitrary: fc.integer({ min: 0, max: 300 }), weight: 3 },
                { arbitrary: fc.integer({ min: 0, max: 1200 }), weight: 1 },
              ),
            ),
            { minLength: 150, maxLength: 400, size: 'max' },
          ),
          async (nAgents, steps) => {
            const ownerId = id();
            const agents = Array.from({ length: nAgents }, id);
            const owner: number[] = [];
            const per = new Map<string, number[]>();
            for (const [ai, d] of steps) {
              clock.advance(d);
              const agentId = agents[ai % nAgents];
              const o = await attempt(limiter, 'vote', { agentId, ownerId });
              if (!o.ok) {
                expect(o.code).to.be.oneOf(['RATE_LIMITED', 'OWNER_RATE_LIMITED']);
                continue;
              }
              owner.push(clock.t);
              per.set(agentId, [...(per.get(agentId) ?? []), clock.t]);
            }
            expect(maxInSpan(owner, SPAN)).to.be.at.most(POLICIES.vote.ownerPerMinute);
            if (maxInSpan(owner, SPAN) === POLICIES.vote.ownerPerMinute) ownerCapReached++;
            for (const times of per.values()) expect(maxInSpan(times, SPAN)).to.be.at.most(POLICIES.vote.perMinute);
          },
        ),
        { numRuns: 25 },
      );
      expect(ownerCapReached, 'runs that filled the owner cap').to.be.greaterThan(0);
    });

    it('the honest retry succeeds: waiting exactly Retry-After and retrying is accepted', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('post', 'comment', 'vote', 'follow') as fc.Arbitrary<'post' | 'comment' | 'vote' | 'follow'>,
          fc.array(delay, { minLength: 1, maxLength: 60, size: 'max' }),
          async (action, delays) => {
            const subject = { agentId: id(), ownerId: id(), threadId: id() };
            for (const d of delays) {
              clock.advance(d % 2500);
              const o = await attempt(limiter, action, subject);
              if (o.ok) continue;
              clock.advance(o.retryAfterSeconds * 1000);
              const retry = await attempt(limiter, action, subject);
              expect(retry.ok, `retry after ${o.retryAfterSeconds}s of ${o.code}`).to.equal(true);
            }
          },
        ),
        { numRuns: 40 },
      );
    });

    it('a rejected attempt is not counted by any rule (all or nothing)', async () => {
      const subject = { agentId: id(), ownerId: id(), threadId: id() };
      expect((await attempt(limiter, 'comment', subject)).ok).to.equal(true);
      // 20 rejected attempts inside the gap must not move the gap nor use quota.
      for (let i = 0; i < 20; i++) {
        clock.advance(50);
        const o = await attempt(limiter, 'comment', subject);
        expect(o.ok).to.equal(false);
      }
      clock.advance(15_000 - 20 * 50);
      const o = await attempt(limiter, 'comment', subject);
      expect(o.ok).to.equal(true);
      expect(o.headers.RateLimit).to.match(/"comment-agent";r=28;/);
    });

    it('boundaries: 3 s post gap to the millisecond; the 11th post waits for the 1st to leave the window', async () => {
      const subject = { agentId: id(), ownerId: id() };
      const t0 = clock.t;
      expect((await attempt(limiter, 'post', subject)).ok).to.equal(true);
      clock.advance(2999);
      expect(await attempt(limiter, 'post', subject)).to.deep.include({
        ok: false,
        code: 'POST_COOLDOWN_ACTIVE',
        retryAfterSeconds: 1,
      });
      clock.advance(1);
      expect((await attempt(limiter, 'post', subject)).ok).to.equal(true);
      for (let i = 2; i < 10; i++) {
        clock.advance(3000);
        expect((await attempt(limiter, 'post', subject)).ok).to.equal(true);
      }
      clock.t = t0 + 30_000;
      // 10 posts in [t0, t0+27 s]: the next is possible at t0 + 60.001 s → 31 s from now.
      const r = await attempt(limiter, 'post', subject);
      expect(r).to.deep.include({ ok: false, code: 'RATE_LIMITED', retryAfterSeconds: 31 });
      expect(r.headers['RateLimit-Policy']).to.equal(
        '"post-agent";q=10;w=60, "post-gap";q=1;w=3, "post-owner";q=25;w=60',
      );
      expect(r.headers.RateLimit).to.match(/^"post-agent";r=0;t=31, /);
      clock.t = t0 + 60_000;
      expect((await attempt(limiter, 'post', subject)).ok, 'still inside the closed span').to.equal(false);
      clock.t = t0 + 60_001;
      expect((await attempt(limiter, 'post', subject)).ok).to.equal(true);
    });

    it('no fixed-window burst: 10 posts late in one minute block 10 more early in the next', async () => {
      const subject = { agentId: id(), ownerId: id() };
      clock.t = 1_750_000_000_000 - (1_750_000_000_000 % 60_000) + 30_000;
      for (let i = 0; i < 10; i++) {
        expect((await attempt(limiter, 'post', subject)).ok).to.equal(true);
        clock.advance(3000);
      }
      // Now in the next calendar minute: a fixed window would allow 10 more.
      const o = await attempt(limiter, 'post', subject);
      expect(o).to.deep.include({ ok: false, code: 'RATE_LIMITED' });
    });
  });
}

for (const kind of ['redis', 'cluster'] as const)
  describe(`limits: ${kind} and memory limiters decide identically`, function () {
    this.timeout(60_000);
    it('same attempts and clock → same outcomes, codes and Retry-After', async () => {
      const action = fc.constantFrom('post', 'comment', 'vote', 'react', 'follow') as fc.Arbitrary<
        'post' | 'comment' | 'vote' | 'react' | 'follow'
      >;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(action, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 2 }), delay), {
            minLength: 1,
            maxLength: 120,
            size: 'max',
          }),
          async (steps) => {
            const clock = new Clock();
            const redis = await makeLimiter(kind, clock);
            const memory = await makeLimiter('memory', clock);
            try {
              const owner = id();
              const agents = [id(), id(), id(), id()];
              const threads = [id(), id(), id()];
              for (const [act, ai, ti, d] of steps) {
                clock.advance(d % 4000);
                // Agent 3 is unowned: its own owner.
                const subject = { agentId: agents[ai], ownerId: ai === 3 ? null : owner, threadId: threads[ti] };
                const [a, b]: Outcome[] = [await attempt(redis, act, subject), await attempt(memory, act, subject)];
                expect(a).to.deep.equal(b);
              }
            } finally {
              await redis.close();
              await memory.close();
            }
          },
        ),
        { numRuns: 30 },
      );
    });

    it('a 15-minute window (failed logins per address and per account): same outcomes, and never more than the caps in any span', async () => {
      const { perMinute: perIp, perAccount, windowSeconds } = POLICIES.login_failure;
      const windowMs = windowSeconds * 1000;
      const refused = { ip: 0, account: 0 };
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.tuple(
              fc.integer({ min: 0, max: 1 }),
              fc.integer({ min: 0, max: 7 }),
              fc.oneof(
                { weight: 30, arbitrary: fc.integer({ min: 0, max: 2000 }) },
                { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 600_000 }) },
              ),
            ),
            { minLength: 1, maxLength: 250, size: 'max' },
          ),
          async (steps) => {
            const clock = new Clock();
            const redis = await makeLimiter(kind, clock);
            const memory = await makeLimiter('memory', clock);
            try {
              const ips = [id(), id()];
              const accepted: { t: number; ip: number; account: number }[] = [];
              for (const [ip, account, d] of steps) {
                clock.advance(d);
                const subject = { ip: ips[ip], account: `acct${account}` };
                const [a, b]: Outcome[] = [
                  await attempt(redis, 'login_failure', subject),
                  await attempt(memory, 'login_failure', subject),
                ];
                expect(a).to.deep.equal(b);
                if (a.ok) accepted.push({ t: clock.now(), ip, account });
                else if (
                  a.retryAfterSeconds &&
                  accepted.filter((x) => x.ip === ip && x.t > clock.now() - windowMs).length >= perIp
                )
                  refused.ip++;
                else refused.account++;
              }
              for (const e of accepted) {
                const span = accepted.filter((x) => x.ip === e.ip && x.t >= e.t && x.t <= e.t + windowMs);
                expect(span.length).to.be.at.most(perIp);
                expect(span.filter((x) => x.account === e.account).length).to.be.at.most(perAccount);
              }
            } finally {
              await redis.close();
              await memory.close();
            }
          },
        ),
        { numRuns: 20 },
      );
      // The runs reached both caps (else the property above says nothing).
      expect(refused.ip, 'refusals by the address cap').to.be.greaterThan(0);
      expect(refused.account, 'refusals by the account cap').to.be.greaterThan(0);
    });
  });
