import crypto from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import { createApp } from '../../src/app';
import { RedisLimiter } from '../../src/limits/redis';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, type TestAgent } from '../helpers/factories';
import { startRedisCluster, type RedisClusterHandle } from '../helpers/redis-cluster';
import { whenReady } from './helpers';

/**
 * A Redis Cluster with one master stopped: the writes whose owner's hash tag lives on that master
 * fail closed, every other write goes on, and once the master is back everything works without
 * a restart. The cluster is this test's own (it kills a node); the database is the test one.
 */
describe('limits: a Redis Cluster with one master stopped', function () {
  this.timeout(60_000);
  let cluster: RedisClusterHandle;
  let limiter: RedisLimiter;
  let server: http.Server;
  let base: string;
  const writers: { agent: TestAgent; master: number }[] = [];

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
    return { status: res.status, body: text ? JSON.parse(text) : undefined, ms: performance.now() - t0 };
  };
  const post = (w: TestAgent, text: string) => call('POST', '/posts', w.key, { communitySlug: 'general', body: text });

  before(async () => {
    const ctx = await getContext();
    cluster = await startRedisCluster();
    limiter = await whenReady(
      new RedisLimiter({
        clusterNodes: cluster.nodes,
        keyPrefix: `svc:test:cluster-fault:${crypto.randomBytes(4).toString('hex')}:`,
        // A stopped master refuses connections at once whatever the timeout; a longer one keeps a
        // loaded machine's slow answers from the other masters from reading as an outage.
        commandTimeoutMs: 1000,
      }),
    );
    const app = createApp({ ...ctx.deps, limiter });
    server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Writers until master 0 serves at least two owners and the other masters at least two between them.
    while (writers.filter((w) => w.master === 0).length < 2 || writers.filter((w) => w.master !== 0).length < 2) {
      const owner = await newOwner();
      const agent = await newAgent({ owner });
      // The limiter's keys of an owned agent carry the hash tag {owner:ID}: its slot decides the master.
      writers.push({ agent, master: await cluster.masterOf(`{owner:${owner.owner.id}}`) });
    }
  });

  after(async () => {
    await limiter?.close();
    if (server) {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    }
    await cluster?.stop();
  });

  it('writes on the stopped master 429 RATE_LIMITER_UNAVAILABLE at once, the others 201; after it returns, all work without a restart', async () => {
    for (let i = 0; (await call('GET', '/health')).body.data.cache.ok !== true; i++) {
      expect(i, '/health reports the cache ok before the stop').to.be.below(50);
      await new Promise((res) => setTimeout(res, 100));
    }
    const down = writers.filter((w) => w.master === 0);
    const up = writers.filter((w) => w.master !== 0);
    await cluster.stopNode(0);

    for (const [i, w] of down.entries()) {
      const r = await post(w.agent, `down ${i}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITER_UNAVAILABLE');
      expect(r.ms, 'answered at once').to.be.below(1000);
    }
    for (const [i, w] of up.entries()) {
      const r = await post(w.agent, `up ${i}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
    }
    // Reads fail open whatever the slot.
    expect((await call('GET', '/me', down[0].agent.key)).status).to.equal(200);
    const h = await call('GET', '/health');
    expect([h.status, h.body.data.cache.ok, h.body.data.status]).to.deep.equal([200, false, 'degraded']);
    const db = (await getContext()).db;
    const ids = down.map((w) => w.agent.agent.id);
    expect(Number((await db('posts').whereIn('author_id', ids).count({ n: '*' }))[0].n)).to.equal(0);

    await cluster.startNode(0);
    const until = Date.now() + 15_000;
    for (const [i, w] of down.entries()) {
      let r = await post(w.agent, `back ${i}`);
      while (r.status === 429 && r.body.error.code === 'RATE_LIMITER_UNAVAILABLE' && Date.now() < until) {
        await new Promise((res) => setTimeout(res, 100));
        r = await post(w.agent, `back ${i}`);
      }
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
    }
    // Limits hold again on the returned master: an immediate second post meets the 3 s gap.
    expect((await post(down[0].agent, 'again')).body.error.code).to.equal('POST_COOLDOWN_ACTIVE');
    for (let i = 0; (await call('GET', '/health')).body.data.cache.ok !== true; i++) {
      expect(i, '/health reports the cache ok again').to.be.below(50);
      await new Promise((res) => setTimeout(res, 100));
    }
  });
});
