import { expect } from 'chai';
import { AppError } from '../../src/errors';
import { SETTLE_WAIT_MS, SettlingLimiter } from '../../src/limits/settling';
import type { Limiter, Taken } from '../../src/limits/types';
import { Clock, id, makeLimiter } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** take() as a value: the Taken, or the 429's code. */
async function tryTake(
  l: Limiter,
  subject: { agentId: string; ownerId: string },
): Promise<{ taken?: Taken; code?: string; retryAfter?: number; ms: number }> {
  const t0 = performance.now();
  try {
    const taken = await l.take('vote', subject);
    return { taken, ms: performance.now() - t0 };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { code: e.code, retryAfter: Number(e.headers['Retry-After']), ms: performance.now() - t0 };
  }
}

for (const kind of ['redis', 'memory'] as const) {
  describe(`limits: refused attempts wait for this process's attempts in flight (${kind})`, function () {
    this.timeout(20_000);
    let inner: Limiter;
    let limiter: SettlingLimiter;
    const subject = () => ({ agentId: id(), ownerId: id() });

    beforeEach(async () => {
      inner = await makeLimiter(kind, new Clock());
      limiter = new SettlingLimiter(inner);
    });
    afterEach(() => limiter.close());

    /** Fills the 60 votes a minute: 59 kept, one held by a request still running. */
    async function fullWithOneHeld(s: { agentId: string; ownerId: string }): Promise<Taken> {
      for (let i = 0; i < 59; i++) (await limiter.take('vote', s)).settle();
      return limiter.take('vote', s);
    }

    it('a slot held by a request that is then refused goes to the attempt waiting for it', async () => {
      const s = subject();
      const held = await fullWithOneHeld(s);
      // Without the wait the log is full: the limiter underneath refuses at once.
      expect((await tryTake(inner, s)).code).to.equal('RATE_LIMITED');
      setTimeout(() => void held.refund(), 50);
      const r = await tryTake(limiter, s);
      expect(r.taken, r.code).to.not.equal(undefined);
      expect(r.ms).to.be.within(40, SETTLE_WAIT_MS);
    });

    it('a held slot that is kept (its request succeeded): the waiter gets its 429 as soon as it settles', async () => {
      const s = subject();
      const held = await fullWithOneHeld(s);
      setTimeout(() => held.settle(), 50);
      const r = await tryTake(limiter, s);
      expect(r.code).to.equal('RATE_LIMITED');
      expect(r.ms).to.be.within(40, SETTLE_WAIT_MS / 2);
    });

    it("nothing in flight: a 429 at once with the window's wait; a holder still in flight after SETTLE_WAIT_MS: a 429 with Retry-After 1 (its slot may come back)", async () => {
      const s = subject();
      for (let i = 0; i < 60; i++) (await limiter.take('vote', s)).settle();
      const now = await tryTake(limiter, s);
      expect(now.code).to.equal('RATE_LIMITED');
      expect(now.ms).to.be.below(SETTLE_WAIT_MS / 4);
      expect(now.retryAfter).to.be.within(59, 61);
      const s2 = subject();
      const held = await fullWithOneHeld(s2);
      const stuck = await tryTake(limiter, s2);
      expect(stuck.code).to.equal('RATE_LIMITED');
      expect(stuck.ms).to.be.within(SETTLE_WAIT_MS - 50, SETTLE_WAIT_MS + 500);
      expect(stuck.retryAfter).to.equal(1);
      // Once it settles as kept, the wait is the window's again.
      held.settle();
      expect((await tryTake(limiter, s2)).retryAfter).to.be.within(59, 61);
    });

    it("another agent's attempts in flight are not waited for", async () => {
      const s = subject();
      for (let i = 0; i < 60; i++) (await limiter.take('vote', s)).settle();
      await fullWithOneHeld(subject());
      const r = await tryTake(limiter, s);
      expect(r.code).to.equal('RATE_LIMITED');
      expect(r.ms).to.be.below(SETTLE_WAIT_MS / 4);
    });

    it('the audit burst: 30 attempts refused by their statement and 60 valid ones at once, all 60 valid accepted', async () => {
      const s = subject();
      // A refused request gives its slot back only after its statement ran (here 20-60 ms).
      const refused = Array.from({ length: 30 }, async () => {
        const t = await limiter.take('vote', s);
        await sleep(20 + Math.random() * 40);
        await t.refund();
      });
      const valid = Array.from({ length: 60 }, async () => {
        const r = await tryTake(limiter, s);
        await sleep(Math.random() * 20);
        r.taken?.settle();
        return r.code ?? 'ok';
      });
      const [, outcomes] = await Promise.all([Promise.all(refused), Promise.all(valid)]);
      expect(outcomes).to.deep.equal(Array(60).fill('ok'));
    });
  });
}
