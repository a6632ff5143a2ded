import crypto from 'crypto';
import { expect } from 'chai';
import Redis, { Cluster } from 'ioredis';
import { ConfigError, loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { createLimiter } from '../../src/limits';
import { MemoryLimiter } from '../../src/limits/memory';
import { RedisLimiter } from '../../src/limits/redis';
import { SettlingLimiter } from '../../src/limits/settling';
import { TEST_REDIS_URL } from '../helpers/context';
import { sharedRedisCluster } from '../helpers/redis-cluster';
import { attempt, Clock, id, makeLimiter, redisTarget, whenReady } from './helpers';
import { POLICIES } from '../../src/limits/policy';
import { rulesFor } from '../../src/limits/rules';

const prefix = () => `svc:test:limits:${crypto.randomBytes(5).toString('hex')}:`;

// The exactly-once limits, on one Redis and on a real 3-master Redis Cluster.
for (const kind of ['redis', 'cluster'] as const)
  describe(`limits: Redis limiter (${kind}), several processes`, function () {
    this.timeout(20_000);

    it('4 processes sharing Redis, 200 parallel votes of one agent: exactly 60 accepted', async () => {
      const p = prefix();
      const clock = new Clock();
      const target = await redisTarget(kind);
      const fleet = await Promise.all(
        Array.from({ length: 4 }, () => whenReady(new RedisLimiter({ ...target, keyPrefix: p, clock: clock.now }))),
      );
      try {
        const subject = { agentId: id(), ownerId: id() };
        const rs = await Promise.all(Array.from({ length: 200 }, (_, i) => attempt(fleet[i % 4], 'vote', subject)));
        expect(rs.filter((r) => r.ok)).to.have.length(60);
        expect(new Set(rs.filter((r) => !r.ok).map((r) => (r.ok ? '' : r.code)))).to.deep.equal(
          new Set(['RATE_LIMITED']),
        );
      } finally {
        await Promise.all(fleet.map((l) => l.close()));
      }
    });

    it('5 agents of one owner, 300 parallel votes over 4 processes: exactly 120 accepted (owner cap)', async () => {
      const p = prefix();
      const clock = new Clock();
      const target = await redisTarget(kind);
      const fleet = await Promise.all(
        Array.from({ length: 4 }, () => whenReady(new RedisLimiter({ ...target, keyPrefix: p, clock: clock.now }))),
      );
      try {
        const ownerId = id();
        const agents = Array.from({ length: 5 }, id);
        const rs = await Promise.all(
          Array.from({ length: 300 }, (_, i) => attempt(fleet[i % 4], 'vote', { agentId: agents[i % 5], ownerId })),
        );
        expect(rs.filter((r) => r.ok)).to.have.length(120);
      } finally {
        await Promise.all(fleet.map((l) => l.close()));
      }
    });
  });

describe('limits: on a Redis Cluster, one slot per script', function () {
  this.timeout(20_000);

  it('every action of the policy table, with every subject field, names keys of one hash slot', async () => {
    const { nodes } = await sharedRedisCluster();
    const r = new Redis(nodes[0]);
    try {
      const subjects = [
        { agentId: id(), ownerId: id(), threadId: id(), ip: '10.1.2.3', account: 'acct' },
        { agentId: id(), ownerId: null, threadId: id(), ip: '2001:db8::1', account: 'acct' },
      ];
      let checked = 0;
      for (const action of Object.keys(POLICIES) as (keyof typeof POLICIES)[])
        for (const subject of subjects) {
          const keys = (rulesFor(action, subject, 'svc:') ?? []).map((x) => x.key);
          const slots = new Set(await Promise.all(keys.map((k) => r.call('CLUSTER', 'KEYSLOT', k))));
          expect(slots.size, `${action}: ${keys.join(' ')}`).to.be.at.most(1);
          checked += keys.length;
        }
      expect(checked).to.be.greaterThan(Object.keys(POLICIES).length);
    } finally {
      r.disconnect();
    }
  });

  it("adopt(): an agent whose own tag and its new owner's live on different masters keeps its history", async () => {
    const cluster = await sharedRedisCluster();
    // An agent and an owner whose hash tags the cluster serves from two different masters.
    let agentId = id();
    let ownerId = id();
    while ((await cluster.masterOf(`{agent:${agentId}}`)) === (await cluster.masterOf(`{owner:${ownerId}}`))) {
      agentId = id();
      ownerId = id();
    }
    const clock = new Clock();
    const l = await makeLimiter('cluster', clock);
    try {
      for (let i = 0; i < 60; i++) expect((await attempt(l, 'vote', { agentId })).ok).to.equal(true);
      await l.adopt(agentId, ownerId);
      const vote = await attempt(l, 'vote', { agentId, ownerId });
      expect(vote.ok === false && vote.code).to.equal('RATE_LIMITED');
      // The owner's log on its own master holds the 60 votes: two other agents of the owner share
      // the 60 left of its 120 (without the move they would get 100 of 100).
      const others = [id(), id()];
      let ok = 0;
      for (let i = 0; i < 100; i++) if ((await attempt(l, 'vote', { agentId: others[i % 2], ownerId })).ok) ok++;
      expect(ok).to.equal(60);
    } finally {
      await l.close();
    }
  });
});

// A web process under load can block its event loop past the command timeout; an answer that
// arrived meanwhile must count (a plain client timer fired first and failed it: 429 under load).
for (const kind of ['redis', 'cluster'] as const)
  describe(`limits: a busy event loop (${kind})`, function () {
    this.timeout(20_000);
    it('an answer that arrived while the loop was blocked past the command timeout is taken, not 429', async () => {
      const l = await whenReady(
        new RedisLimiter({ ...(await redisTarget(kind)), keyPrefix: prefix(), commandTimeoutMs: 100 }),
      );
      try {
        const subject = { agentId: id(), ownerId: id() };
        const remaining: number[] = [];
        for (let i = 0; i < 3; i++) {
          const pending = attempt(l, 'vote', subject);
          // Microtasks only (no I/O turn): the command is written, its answer not yet read.
          for (let t = 0; t < 50; t++) await Promise.resolve();
          const until = Date.now() + 400;
          while (Date.now() < until); // a long synchronous task: 4 command timeouts
          const r = await pending;
          expect(r).to.include({ ok: true });
          remaining.push(Number(/;r=(\d+)/.exec(r.headers!.RateLimit)![1]));
        }
        // Each one was counted, once.
        expect(remaining[1]).to.equal(remaining[0] - 1);
        expect(remaining[2]).to.equal(remaining[0] - 2);
      } finally {
        await l.close();
      }
    });
  });

describe('limits: Redis limiter', function () {
  this.timeout(20_000);

  it('without a caller clock it uses Redis server TIME', async () => {
    const l = new RedisLimiter({ url: TEST_REDIS_URL, keyPrefix: prefix() });
    try {
      const subject = { agentId: id(), ownerId: id() };
      const first = await attempt(l, 'post', subject);
      expect(first.ok).to.equal(true);
      expect(first.headers.RateLimit).to.match(/^"post-agent";r=9;t=6[01], "post-gap";r=0;t=3, /);
      expect(await attempt(l, 'post', subject)).to.deep.include({
        ok: false,
        code: 'POST_COOLDOWN_ACTIVE',
        retryAfterSeconds: 3,
      });
    } finally {
      await l.close();
    }
  });

  it('keys of one owner live under one hash tag, and expire on their own', async () => {
    const p = prefix();
    const clock = new Clock();
    const l = new RedisLimiter({ url: TEST_REDIS_URL, keyPrefix: p, clock: clock.now });
    const r = new Redis(TEST_REDIS_URL);
    try {
      const ownerId = id();
      const agentId = id();
      expect((await attempt(l, 'comment', { agentId, ownerId, threadId: id() })).ok).to.equal(true);
      const keys = await r.keys(`${p}*`);
      expect(keys).to.have.length(3);
      for (const k of keys) {
        expect(k.startsWith(`${p}{owner:${ownerId}}:`)).to.equal(true);
        expect(await r.pttl(k)).to.be.within(1, 61_000);
      }
    } finally {
      await l.close();
      r.disconnect();
    }
  });
});

describe('limits: createLimiter', () => {
  const config = (redis: string) => loadConfig({ NODE_ENV: 'test', REDIS_URL: redis, LOG_LEVEL: 'silent' });
  it('REDIS_URL set → Redis limiter; unset → in-memory limiter, with a single-process warning', async () => {
    const log = createLogger('silent');
    const warnings: string[] = [];
    log.warn = ((msg: string) => void warnings.push(msg)) as typeof log.warn;
    const r = createLimiter(config(TEST_REDIS_URL), log);
    const m = createLimiter(config(''), log);
    try {
      // Both behind the wait for this process's attempts in flight (settling.ts).
      expect(r).to.be.instanceOf(SettlingLimiter);
      expect(m).to.be.instanceOf(SettlingLimiter);
      expect((r as SettlingLimiter).inner).to.be.instanceOf(RedisLimiter);
      expect((m as SettlingLimiter).inner).to.be.instanceOf(MemoryLimiter);
      expect([r.kind, m.kind]).to.deep.equal(['redis', 'memory']);
      expect(warnings.join('\n')).to.match(/single process only/);
      expect(typeof (await r.ping())).to.equal('number');
    } finally {
      await r.close();
      await m.close();
    }
  });

  it('REDIS_CLUSTER_NODES set → the Redis limiter on the cluster client; with REDIS_URL too, or malformed, a configuration error', async () => {
    const { nodes } = await sharedRedisCluster();
    const list = nodes.map((n) => `${n.host}:${n.port}`).join(',');
    const l = createLimiter(loadConfig({ NODE_ENV: 'test', REDIS_CLUSTER_NODES: list }), createLogger('silent'));
    try {
      expect((l as SettlingLimiter).inner).to.be.instanceOf(RedisLimiter);
      expect(((l as SettlingLimiter).inner as RedisLimiter).redis).to.be.instanceOf(Cluster);
      expect((await attempt(l, 'post', { agentId: id(), ownerId: id() })).ok).to.equal(true);
      expect(typeof (await l.ping())).to.equal('number');
    } finally {
      await l.close();
    }
    expect(() => loadConfig({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER_NODES: list })).to.throw(
      ConfigError,
      'set REDIS_URL or REDIS_CLUSTER_NODES, not both',
    );
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'a:1,b:x' })).to.throw(ConfigError, 'REDIS_CLUSTER_NODES');
    expect(loadConfig({ REDIS_CLUSTER_NODES: ' r1:7000, r2 ' }).redisClusterNodes).to.deep.equal([
      { host: 'r1', port: 7000 },
      { host: 'r2', port: 6379 },
    ]);
  });

  it('test runs get their own key prefix: two limiters do not share quotas', async () => {
    const log = createLogger('silent');
    const clock = new Clock();
    const [a, b] = [
      createLimiter(config(TEST_REDIS_URL), log, { clock: clock.now }),
      createLimiter(config(TEST_REDIS_URL), log, { clock: clock.now }),
    ];
    try {
      const subject = { agentId: id(), ownerId: id() };
      expect((await attempt(a, 'post', subject)).ok).to.equal(true);
      expect((await attempt(b, 'post', subject)).ok).to.equal(true);
      expect((await attempt(a, 'post', subject)).ok).to.equal(false);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

for (const kind of ['redis', 'cluster', 'memory'] as const) {
  describe(`limits: taking an attempt back (${kind})`, () => {
    it('refund() removes exactly the refunded attempts from every rule (agent and owner caps, gaps)', async () => {
      const clock = new Clock();
      const l = await makeLimiter(kind, clock);
      try {
        const subject = { agentId: id(), ownerId: id() };
        const taken = [];
        for (let i = 0; i < 60; i++) taken.push(await l.take('vote', subject));
        expect((await attempt(l, 'vote', subject)).ok, '61st refused').to.equal(false);
        await taken[10].refund();
        await taken[10].refund(); // twice: still one attempt back
        expect((await attempt(l, 'vote', subject)).ok, 'one back').to.equal(true);
        expect((await attempt(l, 'vote', subject)).ok).to.equal(false);
        // The owner log was refunded too: another agent of the owner still has 120 - 60 left.
        const other = { agentId: id(), ownerId: subject.ownerId };
        let ok = 0;
        for (let i = 0; i < 70; i++) if ((await attempt(l, 'vote', other)).ok) ok++;
        expect(ok).to.equal(60);
        // A gap rule: a refunded post leaves no cooldown behind.
        const poster = { agentId: id(), ownerId: id() };
        const p = await l.take('post', poster);
        await p.refund();
        expect((await attempt(l, 'post', poster)).ok, 'no POST_COOLDOWN_ACTIVE after a refund').to.equal(true);
      } finally {
        await l.close();
      }
    });

    it('adopt(): a claimed agent keeps its history under its new owner (caps, gaps, thread gaps, owner caps)', async () => {
      const clock = new Clock();
      const l = await makeLimiter(kind, clock);
      try {
        const agentId = id();
        const ownerId = id();
        const thread = id();
        const unowned = { agentId };
        for (let i = 0; i < 60; i++) expect((await attempt(l, 'vote', unowned)).ok).to.equal(true);
        expect((await attempt(l, 'post', unowned)).ok).to.equal(true);
        expect((await attempt(l, 'comment', { ...unowned, threadId: thread })).ok).to.equal(true);
        // The owner already voted 70 times through another agent: with the claimed agent's 60, 130 > 120.
        for (let i = 0; i < 70; i++) expect((await attempt(l, 'vote', { agentId: id(), ownerId })).ok).to.equal(true);
        clock.advance(2100);
        await l.adopt(agentId, ownerId);
        const owned = { agentId, ownerId };
        const vote = await attempt(l, 'vote', owned);
        expect(vote.ok === false && vote.code).to.equal('RATE_LIMITED');
        const post = await attempt(l, 'post', owned);
        expect(post.ok === false && post.code).to.equal('POST_COOLDOWN_ACTIVE');
        const comment = await attempt(l, 'comment', { ...owned, threadId: thread });
        expect(comment.ok === false && comment.code).to.equal('THREAD_COOLDOWN_ACTIVE');
        const byOther = await attempt(l, 'vote', { agentId: id(), ownerId });
        expect(byOther.ok === false && byOther.code, "the agent's votes count toward its owner's cap").to.equal(
          'OWNER_RATE_LIMITED',
        );
        // The history still runs out when its window does.
        clock.advance(60_000);
        expect((await attempt(l, 'vote', owned)).ok).to.equal(true);
        expect((await attempt(l, 'post', owned)).ok).to.equal(true);
      } finally {
        await l.close();
      }
    });
  });
}
