import { ChildProcess } from 'child_process';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createAgent, issueApiKey } from '../../src/identity/service';
import { SCOPES } from '../../src/identity/scopes';
import { createCommunity } from '../../src/communities/service';
import {
  faultEnv,
  freePort,
  startPrivateServices,
  openDb,
  outputOf,
  PrivatePostgres,
  PrivateRedis,
  runToEnd,
  sleep,
  spawnEntry,
  stopChild,
  timed,
  Timed,
  waitHttp,
} from './harness';

/**
 * The real server process against private PostgreSQL and Redis instances that the test stops and
 * restarts under a write load. Promises checked: no 500 and no hang (every answer < 5 s), 503
 * during a database outage, fail-closed writes and served reads during a cache outage, recovery
 * within 10 s without restarting the server, and no acknowledged write lost.
 */
describe('faults: database and cache outages under load (real server process)', function () {
  this.timeout(180_000);
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let server: ChildProcess;
  let base: string;
  let db: Knex;
  let slug: string;
  const report: string[] = [];

  async function agents(n: number, tag: string) {
    const out: { id: string; key: string }[] = [];
    for (let i = 0; i < n; i++) {
      const a = await createAgent(db, {
        handle: `f${tag}_${i}_${Date.now().toString(36)}`.slice(0, 30),
        displayName: 'Fault',
        ownerId: null,
      });
      out.push({ id: a.id, key: (await issueApiKey(db, a.id, [...SCOPES])).key });
    }
    return out;
  }

  /** Each agent publishes one post first (the vote targets of the load). */
  async function seedPosts(as: { key: string }[]) {
    const ids: string[] = [];
    for (const a of as) {
      const r = await timed('POST', `${base}/api/v1/posts`, {
        key: a.key,
        body: { communitySlug: slug, body: 'seed' },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      ids.push(r.body.data.id);
    }
    return ids;
  }

  before(async function () {
    this.timeout(180_000);
    ({ pg, redis } = await startPrivateServices());
    const port = await freePort();
    const env = faultEnv(pg, redis, port);
    const rel = spawnEntry('release', env);
    const code = await runToEnd(rel, 120_000);
    expect(code, outputOf(rel)).to.equal(0);
    db = openDb(pg.url);
    slug = 'faults';
    await createCommunity(db, { slug, name: 'Faults', description: 'fault tests' });
    server = spawnEntry('server', env);
    base = `http://127.0.0.1:${port}`;
    await waitHttp(`${base}/api/v1/health`, 60_000);
  });

  after(async function () {
    this.timeout(60_000);
    if (report.length) console.log(report.map((l) => '      ' + l).join('\n'));
    await stopChild(server);
    await db?.destroy();
    await redis?.kill();
    await pg?.destroy();
  });

  it('PostgreSQL restarted, then down 5 s, during a write load: 503 (never 500, never > 5 s), recovery < 10 s, no acknowledged write lost', async () => {
    const as = await agents(16, 'p');
    const targets = await seedPosts(as);
    await sleep(3100); // the post gap of the seed posts
    const results: (Timed & { kind: string; agent: number; target?: string })[] = [];
    let stopLoad = false;
    const loops = as.map(async (a, i) => {
      let t = 0;
      let nextPost = Date.now();
      while (!stopLoad) {
        if (Date.now() >= nextPost) {
          const r = await timed('POST', `${base}/api/v1/posts`, {
            key: a.key,
            body: { communitySlug: slug, body: `load ${i} ${Date.now()}` },
          });
          results.push({ ...r, kind: 'post', agent: i });
          nextPost = Date.now() + 3200;
        }
        const target = targets[(i + 1 + t++) % targets.length];
        if (target !== targets[i] && t <= targets.length) {
          const r = await timed('POST', `${base}/api/v1/posts/${target}/vote`, { key: a.key, body: { value: 1 } });
          results.push({ ...r, kind: 'vote', agent: i, target });
        }
        await sleep(350);
      }
    });
    const health: Timed[] = [];
    const healthLoop = (async () => {
      while (!stopLoad) {
        health.push(await timed('GET', `${base}/api/v1/health`));
        await sleep(200);
      }
    })();

    await sleep(1500);
    const downAt = Date.now();
    // A fast restart first (in-flight queries cut), then an outage longer than the pool's
    // acquire timeout, so writes must give up with 503 rather than wait for the database.
    await pg.restart();
    await sleep(700);
    await pg.stop();
    const stoppedAt = Date.now();
    await sleep(5000);
    const startingAt = Date.now();
    await pg.start();
    const upAt = Date.now();
    // Recovery: the first write acknowledged after the database is back.
    let recoveredAt = 0;
    while (!recoveredAt && Date.now() - upAt < 15_000) {
      await sleep(100);
      if (
        results.some((r) => r.startedAt >= upAt && r.status >= 200 && r.status < 300) &&
        health.some((h) => h.startedAt >= upAt && h.status === 200)
      )
        recoveredAt = Date.now();
    }
    await sleep(1500);
    stopLoad = true;
    await Promise.all([...loops, healthLoop]);

    const all = [...results, ...health];
    const statuses = new Map<number, number>();
    for (const r of all) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const slowest = Math.max(...all.map((r) => r.ms));
    report.push(
      `postgres outage: ${results.length} writes + ${health.length} health probes, statuses ${[...statuses].map(([s, n]) => `${s}:${n}`).join(' ')}, slowest ${slowest} ms, outage ${upAt - downAt} ms, recovered ${recoveredAt ? recoveredAt - upAt : 'never'} ms after start`,
    );

    for (const r of all) {
      expect(r.status, `no answer / 5xx: ${r.error ?? JSON.stringify(r.body)}`).to.be.oneOf([200, 201, 429, 503]);
      expect(r.ms, 'no request may hang over 5 s').to.be.below(5000);
      if (r.status === 503)
        expect(r.body?.error?.code ?? r.body?.data?.status).to.be.oneOf(['SERVICE_UNAVAILABLE', 'degraded', 'ok']);
    }
    // Writes sent and answered while the database was stopped: 503 (or a limit's 429, answered
    // before the database is asked), never a success and never anything else. (A write waits up to
    // the pool's 4 s acquire timeout, so how many fall wholly inside the 5 s depends on timing.)
    const during = results.filter((r) => r.startedAt >= stoppedAt && r.startedAt + r.ms < startingAt);
    expect(
      during.filter((r) => r.status !== 503 && r.status !== 429).map((r) => r.status),
      'writes during the outage fail with 503',
    ).to.deep.equal([]);
    expect(results.filter((r) => r.status === 503).length, 'writes during the outage fail with 503').to.be.greaterThan(
      0,
    );
    report.push(
      `postgres outage: ${during.length} writes sent and answered while it was stopped (${during.filter((r) => r.status === 503).length}× 503), no success among them`,
    );
    expect(
      health.some((h) => h.status === 503),
      '/health reports the outage',
    ).to.equal(true);
    expect(recoveredAt, 'healthy again without a server restart').to.be.greaterThan(0);
    expect(recoveredAt - upAt).to.be.below(10_000);
    expect(server.exitCode, 'the server process kept running').to.equal(null);

    // Every acknowledged write is in the database.
    const posted = results.filter((r) => r.kind === 'post' && r.status === 201).map((r) => r.body.data.id as string);
    const stored = new Set((await db('posts').whereIn('id', posted).select('id')).map((r: any) => r.id));
    expect(
      posted.filter((id) => !stored.has(id)),
      'acknowledged posts missing',
    ).to.deep.equal([]);
    const voted = results.filter((r) => r.kind === 'vote' && r.status === 200);
    for (const v of voted) {
      const row = await db('votes').where({ voter_id: as[v.agent].id, post_id: v.target }).first();
      expect(row?.value, `acknowledged vote of agent ${v.agent} on ${v.target}`).to.equal(1);
    }
    report.push(
      `postgres outage: ${posted.length} acknowledged posts and ${voted.length} acknowledged votes all found in the database`,
    );
  });

  it('Redis killed during load: writes 429 RATE_LIMITER_UNAVAILABLE at once, reads served, recovery without a restart', async () => {
    const as = await agents(8, 'r');
    const targets = await seedPosts(as);
    const results: (Timed & { kind: 'read' | 'write' })[] = [];
    let stopLoad = false;
    const loops = as.map(async (a, i) => {
      let t = 0;
      while (!stopLoad) {
        const target = targets[(i + 1 + (t++ % (targets.length - 1))) % targets.length];
        const w = await timed('POST', `${base}/api/v1/posts/${target}/vote`, {
          key: a.key,
          body: { value: t % 2 ? 1 : -1 },
        });
        results.push({ ...w, kind: 'write' });
        const r1 = await timed('GET', `${base}/api/v1/posts/${target}`, { key: a.key });
        const r2 = await timed('GET', `${base}/api/v1/feed?sort=new`);
        results.push({ ...r1, kind: 'read' }, { ...r2, kind: 'read' });
        await sleep(400);
      }
    });
    await sleep(1500);
    await redis.kill();
    const downAt = Date.now();
    await sleep(3000);
    await redis.start();
    const upAt = Date.now();
    let recoveredAt = 0;
    while (!recoveredAt && Date.now() - upAt < 15_000) {
      await sleep(100);
      if (results.some((r) => r.kind === 'write' && r.startedAt >= upAt && r.status === 200)) recoveredAt = Date.now();
    }
    stopLoad = true;
    await Promise.all(loops);

    // Requests that started well inside the outage window (the client notices within its command timeout).
    const during = results.filter((r) => r.startedAt > downAt + 300 && r.startedAt + r.ms < upAt);
    const dw = during.filter((r) => r.kind === 'write');
    const dr = during.filter((r) => r.kind === 'read');
    const slowestWrite = Math.max(0, ...dw.map((r) => r.ms));
    report.push(
      `redis outage: ${results.length} requests; during the outage ${dw.length} writes (${dw.filter((r) => r.status === 429).length}× 429, slowest ${slowestWrite} ms) and ${dr.length} reads (${dr.filter((r) => r.status === 200).length}× 200); recovered ${recoveredAt ? recoveredAt - upAt : 'never'} ms after restart`,
    );

    for (const r of results) expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 429]);
    expect(dw.length).to.be.greaterThan(3);
    for (const w of dw) {
      expect(w.status).to.equal(429);
      expect(w.body.error.code).to.equal('RATE_LIMITER_UNAVAILABLE');
      expect(w.body.error.retryAfterSeconds).to.be.at.least(1);
      expect(w.ms, 'fail closed at once, not after a hang').to.be.below(1000);
    }
    expect(dr.length).to.be.greaterThan(3);
    for (const r of dr) expect(r.status, 'reads are served without the cache').to.equal(200);
    expect(recoveredAt, 'writes accepted again after Redis returns').to.be.greaterThan(0);
    expect(recoveredAt - upAt).to.be.below(10_000);
    expect(server.exitCode).to.equal(null);
  });
});
