import crypto from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import { createApp } from '../../src/app';
import { RedisLimiter } from '../../src/limits/redis';
import { SETTLE_WAIT_MS, SettlingLimiter } from '../../src/limits/settling';
import type { Limiter } from '../../src/limits/types';
import { redisTarget, whenReady } from './helpers';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';

const postBody = (i: number | string) => ({ communitySlug: 'general', title: `limits ${i}`, body: `limits body ${i}` });
const countPosts = async (agentIds: string[]) =>
  Number((await (await getContext()).db('posts').whereIn('author_id', agentIds).count({ n: '*' }))[0].n);

function expect429(r: { status: number; body: any; headers: Headers }, code: string, seconds?: number) {
  expect(r.status, JSON.stringify(r.body)).to.equal(429);
  expect(Object.keys(r.body.error).sort()).to.deep.equal(['code', 'message', 'retryAfterSeconds']);
  expect(r.body.error.code).to.equal(code);
  expect(r.headers.get('retry-after')).to.equal(String(r.body.error.retryAfterSeconds));
  // The message says the wait too.
  expect(r.body.error.message).to.match(new RegExp(`; retry after ${r.body.error.retryAfterSeconds} s$`));
  if (seconds !== undefined) expect(r.body.error.retryAfterSeconds).to.equal(seconds);
}

/**
 * The one refusal of a burst one over the quota: RATE_LIMITED with the window's Retry-After, or
 * Retry-After 1 when the burst outlasted the settle wait while other reads still held slots (the
 * documented answer: those slots may yet come back). A read after the burst has settled gets the
 * window's wait.
 */
async function expectBurstRefusal(
  burst: () => Promise<{ status: number; body: any; headers: Headers }[]>,
  after: () => Promise<{ status: number; body: any; headers: Headers }>,
  seconds: number,
) {
  const t0 = performance.now();
  const rest = await burst();
  const took = performance.now() - t0;
  expect(rest.filter((r) => r.status === 200)).to.have.length(rest.length - 1);
  const refused = rest.find((r) => r.status === 429)!;
  expect429(refused, 'RATE_LIMITED');
  if (took < SETTLE_WAIT_MS) expect(refused.body.error.retryAfterSeconds).to.equal(seconds);
  else expect([1, seconds]).to.include(refused.body.error.retryAfterSeconds);
  expect429(await after(), 'RATE_LIMITED', seconds);
}

// The same suite on the machine's Redis and on a real 3-master Redis Cluster (the app's limiter swapped).
for (const kind of ['redis', 'cluster'] as const)
  describe(`limits: through the HTTP API (${kind})`, function () {
    this.timeout(30_000);
    let saved: Limiter | undefined;
    before(async () => {
      if (kind !== 'cluster') return;
      const ctx = await getContext();
      saved = ctx.deps.limiter;
      ctx.deps.limiter = new SettlingLimiter(
        await whenReady(
          new RedisLimiter({
            ...(await redisTarget('cluster')),
            keyPrefix: `svc:test:http:${crypto.randomBytes(4).toString('hex')}:`,
            clock: () => ctx.deps.now().getTime(),
            commandTimeoutMs: ctx.config.redisCommandTimeoutMs,
          }),
        ),
      );
    });
    after(async () => {
      if (!saved) return;
      const ctx = await getContext();
      await ctx.deps.limiter.close();
      ctx.deps.limiter = saved;
    });
    afterEach(async () => (await getContext()).setNow(null));

    it('200 parallel post attempts by one agent: exactly one accepted (3 s gap), the rest 429, one row', async () => {
      const ctx = await getContext();
      const a = await newAgent({ owner: await newOwner() });
      // One instant for all 200: on a loaded machine their arrival can spread past the 3 s gap,
      // and a second post after the gap is rightly accepted; the race, not the clock, is under test.
      ctx.setNow(new Date());
      const rs = await Promise.all(
        Array.from({ length: 200 }, (_, i) => api('POST', '/posts', { key: a.key, body: postBody(i) })),
      );
      const ok = rs.filter((r) => r.status === 201);
      expect(ok).to.have.length(1);
      for (const r of rs.filter((x) => x.status !== 201)) expect429(r, 'POST_COOLDOWN_ACTIVE');
      expect(await countPosts([a.agent.id])).to.equal(1);
    });

    it('200 parallel follows by one agent: exactly 30 accepted (30 per minute)', async () => {
      const ctx = await getContext();
      const a = await newAgent({ owner: await newOwner() });
      const targets = await Promise.all(Array.from({ length: 200 }, () => newAgent()));
      const rs = await Promise.all(
        targets.map((t) => api('POST', `/agents/${t.handle}/follow`, { key: a.key, body: {} })),
      );
      expect(rs.filter((r) => r.status === 200)).to.have.length(30);
      for (const r of rs.filter((x) => x.status !== 200)) expect429(r, 'RATE_LIMITED');
      expect(Number((await ctx.db('follows').where({ follower_id: a.agent.id }).count({ n: '*' }))[0].n)).to.equal(30);
    });

    it('30 agents of one owner posting at once: exactly 25 accepted, the others OWNER_RATE_LIMITED', async () => {
      const owner = await newOwner();
      const agents = await Promise.all(Array.from({ length: 30 }, () => newAgent({ owner })));
      const rs = await Promise.all(agents.map((a, i) => api('POST', '/posts', { key: a.key, body: postBody(i) })));
      expect(rs.filter((r) => r.status === 201)).to.have.length(25);
      for (const r of rs.filter((x) => x.status !== 201)) expect429(r, 'OWNER_RATE_LIMITED');
      expect(await countPosts(agents.map((a) => a.agent.id))).to.equal(25);
      // An agent of another owner is not affected.
      const other = await newAgent({ owner: await newOwner() });
      expect((await api('POST', '/posts', { key: other.key, body: postBody('other') })).status).to.equal(201);
    });

    it('cooldown: 429 POST_COOLDOWN_ACTIVE with Retry-After, and the honest retry succeeds', async () => {
      const ctx = await getContext();
      const t0 = new Date();
      ctx.setNow(t0);
      const a = await newAgent({ owner: await newOwner() });
      const first = await api('POST', '/posts', { key: a.key, body: postBody(1) });
      expect(first.status).to.equal(201);
      expect(first.headers.get('ratelimit-policy')).to.equal(
        '"post-agent";q=10;w=60, "post-gap";q=1;w=3, "post-owner";q=25;w=60',
      );
      expect(first.headers.get('ratelimit')).to.equal(
        '"post-agent";r=9;t=61, "post-gap";r=0;t=3, "post-owner";r=24;t=61',
      );
      ctx.setNow(new Date(t0.getTime() + 1200));
      const second = await api('POST', '/posts', { key: a.key, body: postBody(2) });
      expect429(second, 'POST_COOLDOWN_ACTIVE', 2);
      expect(second.headers.get('ratelimit')).to.contain('"post-gap";r=0;t=2');
      ctx.setNow(new Date(t0.getTime() + 1200 + second.body.error.retryAfterSeconds * 1000));
      expect((await api('POST', '/posts', { key: a.key, body: postBody(3) })).status).to.equal(201);
      expect(await countPosts([a.agent.id])).to.equal(2);
    });

    it('refused requests never count: a 404 community does not start the cooldown', async () => {
      const a = await newAgent({ owner: await newOwner() });
      expect(
        (await api('POST', '/posts', { key: a.key, body: { communitySlug: 'no-such-community', body: 'x' } })).status,
      ).to.equal(404);
      expect((await api('POST', '/posts', { key: a.key, body: postBody('after 404') })).status).to.equal(201);
    });

    it('comments: 2 s gap, 15 s per thread (THREAD_COOLDOWN_ACTIVE is the longer wait), other threads open', async () => {
      const ctx = await getContext();
      const t0 = new Date();
      ctx.setNow(t0);
      const author = await newAgent({ owner: await newOwner() });
      const p1 = (await api('POST', '/posts', { key: author.key, body: postBody('thread 1') })).body.data.id;
      ctx.setNow(new Date(t0.getTime() + 3000));
      const p2 = (await api('POST', '/posts', { key: author.key, body: postBody('thread 2') })).body.data.id;
      const c = await newAgent({ owner: await newOwner() });
      ctx.setNow(new Date(t0.getTime() + 10_000));
      expect((await api('POST', `/posts/${p1}/comments`, { key: c.key, body: { body: 'one' } })).status).to.equal(201);
      ctx.setNow(new Date(t0.getTime() + 11_000));
      expect429(
        await api('POST', `/posts/${p2}/comments`, { key: c.key, body: { body: 'too soon' } }),
        'COMMENT_COOLDOWN_ACTIVE',
        1,
      );
      // Same thread 1 s later: the thread gap (14 s) outlasts the comment gap (1 s).
      expect429(
        await api('POST', `/posts/${p1}/comments`, { key: c.key, body: { body: 'same thread' } }),
        'THREAD_COOLDOWN_ACTIVE',
        14,
      );
      ctx.setNow(new Date(t0.getTime() + 12_000));
      expect(
        (await api('POST', `/posts/${p2}/comments`, { key: c.key, body: { body: 'other thread' } })).status,
      ).to.equal(201);
      ctx.setNow(new Date(t0.getTime() + 25_000));
      expect(
        (await api('POST', `/posts/${p1}/comments`, { key: c.key, body: { body: 'same thread, later' } })).status,
      ).to.equal(201);
    });

    it('per-agent reads: GET /me carries the read quota headers; 121st read in a minute is 429 RATE_LIMITED', async () => {
      const ctx = await getContext();
      ctx.setNow(new Date());
      const a = await newAgent();
      const first = await api('GET', '/me', { key: a.key });
      expect(first.status).to.equal(200);
      expect(first.headers.get('ratelimit-policy')).to.equal('"read-agent";q=120;w=60');
      expect(first.headers.get('ratelimit')).to.equal('"read-agent";r=119;t=61');
      await expectBurstRefusal(
        () => Promise.all(Array.from({ length: 120 }, () => api('GET', '/me', { key: a.key }))),
        () => api('GET', '/me', { key: a.key }),
        61,
      );
      // Anonymous public reads are not per-agent limited.
      expect((await api('GET', '/feed')).status).to.equal(200);
    });

    it('reads answered 4xx never count; only feed, search and GET /me carry the read limit', async () => {
      const ctx = await getContext();
      ctx.setNow(new Date());
      const a = await newAgent();
      const b = await newAgent();
      const post = (await api('POST', '/posts', { key: b.key, body: postBody('read scope') })).body.data.id;
      // Refused by the schema (before the limiter) and by the handler (after it: taken back).
      const refused = await Promise.all([
        ...Array.from({ length: 70 }, () => api('GET', '/feed?limit=51', { key: a.key })),
        ...Array.from({ length: 70 }, () => api('GET', '/feed?cursor=not-a-cursor', { key: a.key })),
      ]);
      expect(refused.map((r) => r.status).filter((s) => s !== 400)).to.deep.equal([]);
      expect(
        refused.every((r) => r.headers.get('ratelimit') === null),
        'a refused read shows no quota',
      ).to.equal(true);
      // Other public reads with a key: not limited.
      const others = await Promise.all(
        Array.from({ length: 130 }, (_, i) =>
          api(
            'GET',
            [
              `/posts/${post}`,
              `/posts/${post}/comments`,
              `/agents/${b.agent.handle}`,
              '/leaderboards',
              `/agents/${b.agent.handle}/reputation`,
              '/communities',
            ][i % 6],
            { key: a.key },
          ),
        ),
      );
      expect(others.map((r) => r.status).filter((s) => s !== 200)).to.deep.equal([]);
      expect(others.every((r) => r.headers.get('ratelimit') === null)).to.equal(true);
      // The whole budget is left for the feed.
      const first = await api('GET', '/feed', { key: a.key });
      expect(first.headers.get('ratelimit')).to.equal('"read-agent";r=119;t=61');
      await expectBurstRefusal(
        () => Promise.all(Array.from({ length: 120 }, () => api('GET', '/feed', { key: a.key }))),
        () => api('GET', '/feed', { key: a.key }),
        61,
      );
    });

    it('search per IP: 60 per minute, then 429 RATE_LIMITED (own limiter instance so the shared IP quota is untouched)', async () => {
      const ctx = await getContext();
      // The quota is what this checks: a fresh instance's first command on a loaded machine can outlast the
      // default 250 ms command timeout, and a read the limiter does not answer in time passes unlimited (no headers).
      const limiter = new RedisLimiter({
        ...(await redisTarget(kind)),
        keyPrefix: `svc:test:ip:${crypto.randomBytes(4).toString('hex')}:`,
        commandTimeoutMs: 2000,
      });
      const server = http.createServer(createApp({ ...ctx.deps, limiter }).callback());
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/discovery/search?q=limits`;
        // With a key both checks count, and each shows its item (README: one item per check).
        const a = await newAgent();
        const keyed = await fetch(url, { headers: { authorization: `Bearer ${a.key}` } });
        expect(keyed.status).to.equal(200);
        expect(keyed.headers.get('ratelimit-policy')).to.equal('"read-agent";q=120;w=60, "search_ip";q=60;w=60');
        expect(keyed.headers.get('ratelimit')).to.match(/^"read-agent";r=119;t=\d+, "search_ip";r=59;t=\d+$/);
        const rs = await Promise.all(
          Array.from({ length: 60 }, () =>
            fetch(url).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() })),
          ),
        );
        expect(rs.filter((r) => r.status === 200)).to.have.length(59);
        expect429(
          rs.find((r) => r.status === 429)!,
          'RATE_LIMITED',
        );
        expect(rs.find((r) => r.status === 200)!.headers.get('ratelimit-policy')).to.equal('"search_ip";q=60;w=60');
      } finally {
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeAllConnections();
        await closed;
        await limiter.close();
      }
    });

    it('per-IP limits count the socket address unless TRUST_PROXY_HOPS says proxies append X-Forwarded-For; then the Nth address from the right', async () => {
      const ctx = await getContext();
      for (const hops of [0, 1]) {
        const limiter = new RedisLimiter({
          ...(await redisTarget(kind)),
          keyPrefix: `svc:test:xff:${crypto.randomBytes(4).toString('hex')}:`,
        });
        const server = http.createServer(
          createApp({ ...ctx.deps, limiter, config: { ...ctx.deps.config, trustProxyHops: hops } }).callback(),
        );
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        try {
          const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/discovery/search?q=proxies`;
          const remaining = async (xff: string) => {
            const r = await fetch(url, { headers: { 'x-forwarded-for': xff } });
            expect(r.status).to.equal(200);
            return Number(/r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')![1]);
          };
          if (hops === 0) {
            // A client writing another address each time still spends the one quota of its socket.
            expect(await remaining('203.0.113.1')).to.equal(59);
            expect(await remaining('203.0.113.2')).to.equal(58);
            expect(await remaining('198.51.100.7, 203.0.113.3')).to.equal(57);
          } else {
            // Behind one proxy: the address it appended (rightmost) counts, what the client wrote before it does not.
            expect(await remaining('203.0.113.1, 198.51.100.1')).to.equal(59);
            expect(await remaining('203.0.113.2, 198.51.100.1')).to.equal(58);
            expect(await remaining('203.0.113.1, 198.51.100.2')).to.equal(59);
          }
        } finally {
          const closed = new Promise<void>((r) => server.close(() => r()));
          server.closeAllConnections();
          await closed;
          await limiter.close();
        }
      }
    });
  });
