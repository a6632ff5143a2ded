import { spawn, type ChildProcess } from 'child_process';
import crypto from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import Redis from 'ioredis';
import { createApp } from '../../src/app';
import { RedisLimiter } from '../../src/limits/redis';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, type TestAgent } from '../helpers/factories';
import { freePort } from '../faults/harness';

/**
 * Fail closed, shown on a Redis of our own (never the machine's 6379): a second app instance
 * whose limiter points at it, while the database stays the test one.
 */

async function startRedis(port: number): Promise<ChildProcess> {
  const proc = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const until = Date.now() + 5000;
  for (;;) {
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch (e) {
      probe.disconnect();
      if (Date.now() > until || proc.exitCode !== null) {
        proc.kill('SIGKILL');
        throw e;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return proc;
}

async function stopRedis(proc: ChildProcess | undefined): Promise<void> {
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGKILL');
  await exited;
}

describe('limits: fail closed when Redis is down or stalled', function () {
  this.timeout(30_000);
  let port: number;
  let proc: ChildProcess | undefined;
  let limiter: RedisLimiter;
  let server: http.Server;
  let base: string;
  let agent: TestAgent;

  const call = async (method: string, path: string, key?: string, body?: unknown) => {
    const t0 = performance.now();
    const res = await fetch(base + '/api/v1' + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? JSON.parse(text) : undefined,
      headers: res.headers,
      ms: performance.now() - t0,
    };
  };
  const post = (i: number) =>
    call('POST', '/posts', agent.key, { communitySlug: 'general', title: `fault ${i}`, body: `body ${i}` });
  const postsByAgent = async () =>
    Number((await (await getContext()).db('posts').where({ author_id: agent.agent.id }).count({ n: '*' }))[0].n);

  before(async () => {
    const ctx = await getContext();
    port = await freePort();
    proc = await startRedis(port);
    limiter = new RedisLimiter({
      url: `redis://127.0.0.1:${port}`,
      keyPrefix: `svc:test:fault:${crypto.randomBytes(4).toString('hex')}:`,
      commandTimeoutMs: ctx.config.redisCommandTimeoutMs,
    });
    const app = createApp({ ...ctx.deps, limiter });
    server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    agent = await newAgent({ owner: await newOwner() });
  });

  after(async () => {
    await stopRedis(proc);
    await limiter?.close();
    if (server) {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    }
  });

  const expectUnavailable = (r: { status: number; body: any; headers: Headers; ms: number }) => {
    expect(r.status).to.equal(429);
    expect(r.body.error.code).to.equal('RATE_LIMITER_UNAVAILABLE');
    expect(r.body.error.retryAfterSeconds).to.be.within(1, 2);
    expect(r.headers.get('retry-after')).to.equal(String(r.body.error.retryAfterSeconds));
  };
  /** One request at a time, so the time measured is the answer's, not the queue of a parallel burst. */
  const expectFastUnavailable = async (key: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await call('POST', '/posts', key, { communitySlug: 'general', body: `sequential ${i}` });
      expectUnavailable(r);
      expect(r.ms, 'answered at once, no queueing').to.be.below(500);
    }
  };

  it('with Redis up: writes are limited normally and /health reports the cache ok', async () => {
    const first = await post(0);
    expect(first.status).to.equal(201);
    expect(first.headers.get('ratelimit-policy')).to.contain('"post-agent";q=10;w=60');
    expect((await post(1)).body.error.code).to.equal('POST_COOLDOWN_ACTIVE');
    const h = await call('GET', '/health');
    expect(h.body.data.cache.ok).to.equal(true);
    expect(h.body.data.status).to.equal('ok');
  });

  it('Redis stalled (CLIENT PAUSE): writes 429 RATE_LIMITER_UNAVAILABLE within 500 ms, none written; reads 200; /health cache not ok', async () => {
    const before = await postsByAgent();
    const writer = await newAgent({ owner: await newOwner() });
    const admin = new Redis({ port, host: '127.0.0.1' });
    await admin.call('CLIENT', 'PAUSE', '3000', 'ALL');
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call('POST', '/posts', writer.key, { communitySlug: 'general', body: `stalled ${i}` }),
        ),
      );
      results.forEach(expectUnavailable);
      await expectFastUnavailable(writer.key, 3);
      const me = await call('GET', '/me', agent.key);
      expect(me.status, 'reads fail open').to.equal(200);
      expect(me.ms).to.be.below(500);
      const h = await call('GET', '/health');
      expect(h.status).to.equal(200);
      expect(h.body.data.cache.ok).to.equal(false);
      expect(h.body.data.status).to.equal('degraded');
      expect(h.body.data.database.ok).to.equal(true);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
      admin.disconnect();
    }
    expect(await postsByAgent()).to.equal(before);
    expect(
      Number((await (await getContext()).db('posts').where({ author_id: writer.agent.id }).count({ n: '*' }))[0].n),
    ).to.equal(0);
  });

  it('Redis stopped: writes 429 at once, zero accepted; reads 200; then recovery without a restart', async () => {
    const writer = await newAgent({ owner: await newOwner() });
    await stopRedis(proc);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', '/posts', writer.key, { communitySlug: 'general', body: `down ${i}` }),
      ),
    );
    results.forEach(expectUnavailable);
    await expectFastUnavailable(writer.key, 5);
    // Other write kinds fail closed too (the limiter, not the route, decides).
    const target = await newAgent();
    expectUnavailable(await call('POST', `/agents/${target.handle}/follow`, writer.key));
    const me = await call('GET', '/me', writer.key);
    expect(me.status).to.equal(200);
    const h = await call('GET', '/health');
    expect([h.status, h.body.data.cache.ok, h.body.data.status]).to.deep.equal([200, false, 'degraded']);
    const ctx = await getContext();
    expect(Number((await ctx.db('posts').where({ author_id: writer.agent.id }).count({ n: '*' }))[0].n)).to.equal(0);

    proc = await startRedis(port);
    const until = Date.now() + 8000;
    let r = await call('POST', '/posts', writer.key, { communitySlug: 'general', body: 'back' });
    while (r.status === 429 && r.body.error.code === 'RATE_LIMITER_UNAVAILABLE' && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 100));
      r = await call('POST', '/posts', writer.key, { communitySlug: 'general', body: 'back' });
    }
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect((await call('GET', '/health')).body.data.cache.ok).to.equal(true);
  });

  it('a dead port: the limiter answers RATE_LIMITER_UNAVAILABLE at once, reads pass, ping fails', async () => {
    const dead = new RedisLimiter({ url: `redis://127.0.0.1:${await freePort()}`, commandTimeoutMs: 250 });
    try {
      const t0 = performance.now();
      const err = await dead.consume('vote', { agentId: 'a', ownerId: 'o' }).then(
        () => null,
        (e) => e,
      );
      expect(err?.code).to.equal('RATE_LIMITER_UNAVAILABLE');
      expect(err.headers['Retry-After']).to.equal(String(err.extra.retryAfterSeconds));
      expect(performance.now() - t0).to.be.below(500);
      expect(await dead.consume('read', { agentId: 'a' })).to.deep.equal({});
      expect(await dead.consume('search_ip', { ip: '10.0.0.1' })).to.deep.equal({});
      let pinged = true;
      await dead.ping().catch(() => (pinged = false));
      expect(pinged).to.equal(false);
    } finally {
      await dead.close();
    }
  });
});
