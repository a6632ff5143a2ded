import crypto from 'crypto';
import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createApp } from '../../src/app';
import { webRouters } from '../../src/web';
import { createCaches } from '../../src/caches';
import { ConfigError, loadConfig } from '../../src/config';
import type { Deps } from '../../src/deps';
import { createDb } from '../../src/db/knex';
import { createQuery } from '../../src/db/query';
import { migrateAll } from '../../src/db/migrate';
import { createReadRouting, lagFromSamples, ReadReplicas, type ReadRouting } from '../../src/db/replicas';
import { createAgent, createOwner, createSession, issueApiKey } from '../../src/identity/service';
import { SCOPES } from '../../src/identity/scopes';
import { createLimiter } from '../../src/limits';
import pino from 'pino';
import { createLogger, type Logger } from '../../src/log';
import { ScoringPool } from '../../src/scoring/pool';
import { testConfig } from '../helpers/context';
import { startPgReplicaPair, type PgReplicaPair } from '../helpers/pg-replica';

/** A logger that keeps its warn and info messages. */
/** A real logger whose lines at info and above (child loggers' too) are kept as their messages. */
function recordingLogger(): { log: Logger; said: string[] } {
  const said: string[] = [];
  const stream = {
    write: (line: string) => {
      const o = JSON.parse(line) as { level: number; msg: string };
      if (o.level >= 30) said.push(o.msg);
    },
  };
  return { log: pino({ level: 'info' }, stream), said };
}

interface Web {
  deps: Deps;
  reads: ReadRouting;
  base: string;
  server: http.Server;
  said: string[];
}

/**
 * Lag-tolerant reads on a real streaming replica (pg_basebackup -R of a private primary): a
 * writer reads its own writes at once, everyone else once the replica replayed them, and a
 * stopped replica costs only latency.
 */
describe('read replicas (DATABASE_READ_URL) on a real streaming replica', function () {
  this.timeout(60_000);
  let pair: PgReplicaPair;
  let db: Knex;
  let replica: Knex;
  const webs: Web[] = [];
  const keyPrefix = `svc:test:rw:${crypto.randomBytes(4).toString('hex')}:`;
  let author: { key: string; id: string };
  let reader: { key: string; id: string };

  /** A web process: its own app, caches and read routing, sharing the primary, the replica and Redis. */
  async function startWeb(): Promise<Web> {
    const config = testConfig(pair.primaryUrl, {
      DATABASE_READ_URL: pair.replicaUrl,
      // Replay is paused on purpose below: the replica stays in use however far behind.
      DATABASE_READ_MAX_LAG_MS: '3600000',
    });
    const { log, said } = recordingLogger();
    const reads = createReadRouting(config, log, { keyPrefix, primary: db })!;
    // Checked by the test when it chooses (no background timer): a stopped replica is met by a read first.
    await reads.replicas.check();
    // The caches as in production (the test environment turns the feed cache off): a page an
    // anonymous replica read cached must not answer a writer.
    const caches = createCaches('production', pair.primaryUrl, log);
    caches.evictAgainAfterMs = reads.writes.windowMs;
    const deps: Deps = {
      config,
      log,
      db,
      query: createQuery(db),
      limiter: createLimiter(config, log),
      caches,
      scoringPool: new ScoringPool(1),
      reads,
      now: () => new Date(),
    };
    await caches.listen();
    const server = http.createServer(createApp(deps, { extraRouters: webRouters(deps) }).callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const web = { deps, reads, server, said, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    webs.push(web);
    return web;
  }

  const call = async (web: Web, method: string, path: string, key?: string, body?: unknown) => {
    const res = await fetch(web.base + '/api/v1' + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  async function newKey(): Promise<{ key: string; id: string }> {
    const agent = await createAgent(db, {
      handle: `rr_${crypto.randomBytes(4).toString('hex')}`,
      displayName: 'Agent',
      ownerId: null,
    });
    return { key: (await issueApiKey(db, agent.id, [...SCOPES])).key, id: agent.id };
  }

  /** Until the replica has replayed everything the primary wrote so far. */
  async function caughtUp(): Promise<void> {
    const { rows } = await db.raw('select pg_current_wal_lsn()::text as lsn');
    for (let i = 0; ; i++) {
      const r = await replica.raw('select pg_last_wal_replay_lsn() >= ?::pg_lsn as done', [rows[0].lsn]);
      if (r.rows[0].done) return;
      expect(i, 'replica replays within 10 s').to.be.below(200);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  const newFeed = async (web: Web, key?: string) =>
    (await call(web, 'GET', '/feed?sort=new&limit=50', key)).body.data.map((p: { id: string }) => p.id);

  before(async () => {
    pair = await startPgReplicaPair();
    db = createDb(pair.primaryUrl, 10);
    replica = createDb(pair.replicaUrl, 2, createLogger('silent'));
    await migrateAll(db, pair.primaryUrl, { sessionSecret: 'test-session-secret-0123456789abcdef0123' });
    author = await newKey();
    reader = await newKey();
    await caughtUp();
  });

  after(async () => {
    for (const w of webs) {
      await new Promise<void>((r) => w.server.close(() => r()));
      await w.deps.limiter.close();
      await w.deps.caches.close();
      await w.deps.scoringPool.destroy();
      await w.reads.close();
    }
    await replica?.destroy();
    await db?.destroy();
    await pair?.destroy();
  });

  it('a post is readable by its author at once, through any web process; the global feed shows it once replayed', async () => {
    const a = await startWeb();
    const b = await startWeb();
    await pair.pauseReplay();
    let postId: string;
    try {
      const created = await call(a, 'POST', '/posts', author.key, {
        communitySlug: 'general',
        title: 'fresh',
        body: 'written on the primary',
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      postId = created.body.data.id;
      // An anonymous read first fills each process's feed cache from the replica, without the post.
      for (const web of [a, b]) expect(await newFeed(web)).to.not.include(postId);
      // The author, through the process it wrote through and through another one: the primary,
      // not the page the anonymous read cached.
      for (const web of [a, b]) {
        const mine = await call(web, 'GET', `/posts/${postId}`, author.key);

        expect(mine.status).to.equal(200);
        expect(await newFeed(web, author.key)).to.include(postId);
      }
      // Anyone else reads the replica, which has not replayed the post yet.
      expect((await call(b, 'GET', `/posts/${postId}`, reader.key)).status).to.equal(404);
      expect((await call(a, 'GET', `/posts/${postId}`)).status).to.equal(404);
      expect(await newFeed(b)).to.not.include(postId);
      expect(await newFeed(a, reader.key)).to.not.include(postId);
    } finally {
      await pair.resumeReplay();
    }
    await caughtUp();
    // Once replayed, the global feed shows it once, to everyone (the feed cache holds a page 1 s at most).
    for (let i = 0; ; i++) {
      const ids = [...(await newFeed(a)), ...(await newFeed(b, reader.key))];
      if (ids.filter((id) => id === postId).length === 2) break;
      expect(i, 'the feed shows the replayed post').to.be.below(60);
      await new Promise((r) => setTimeout(r, 100));
    }
    const got = await call(b, 'GET', `/posts/${postId}`);

    expect(got.status, JSON.stringify(got.body)).to.equal(200);
    const h = await call(a, 'GET', '/health');
    expect(h.body.data.status).to.equal('ok');
    expect(h.body.data.replicas).to.have.length(1);
    expect(h.body.data.replicas[0]).to.deep.include({ ok: true, inUse: true });
    expect(h.body.data.replicas[0].name).to.match(/^127\.0\.0\.1:\d+\/svc$/);
    expect(h.body.data.replicas[0].lagMs).to.be.a('number');
  });

  it("an owner's web form write: its agents' reads go to the primary at once, others' to the replica", async () => {
    const web = await startWeb();
    const owner = await createOwner(db, {
      email: `rr-${crypto.randomBytes(4).toString('hex')}@example.test`,
      password: 'correct horse battery staple',
      displayName: 'Owner',
    });
    const session = await createSession(db, web.deps.config.sessionSecret, owner.id);
    const agent = await createAgent(db, {
      handle: `rr_${crypto.randomBytes(4).toString('hex')}`,
      displayName: 'Before',
      ownerId: owner.id,
    });
    const key = (await issueApiKey(db, agent.id, [...SCOPES])).key;
    await caughtUp();
    await pair.pauseReplay();
    try {
      const form = await fetch(`${web.base}/dashboard/agents/${agent.id}/profile`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: `svc_session=${session.cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: session.csrfToken, displayName: 'After', description: '', avatarUrl: '' }),
      });
      expect([form.status, form.headers.get('location')]).to.deep.equal([
        302,
        `/dashboard/agents/${agent.id}/profile?done=profile_updated`,
      ]);
      const name = async (k?: string) => (await call(web, 'GET', `/agents/${agent.handle}`, k)).body.data.displayName;
      expect(await name(key), "the owner's agent reads the primary").to.equal('After');
      expect(await name(reader.key), 'another agent reads the replica, not replayed yet').to.equal('Before');
      expect(await name(), 'so does an anonymous reader').to.equal('Before');
    } finally {
      await pair.resumeReplay();
    }
  });

  it('a stopped replica changes nothing a client sees beyond latency; it is logged once and used again when back', async () => {
    const web = await startWeb();
    const created = await call(web, 'POST', '/posts', reader.key, {
      communitySlug: 'general',
      body: 'before the stop',
    });
    expect(created.status).to.equal(201);
    await caughtUp();
    const before = await newFeed(web);
    expect(before).to.include(created.body.data.id);
    await pair.stopReplica();
    try {
      // The replica is still believed fit: the first read meets it stopped and runs on the primary.
      expect(await newFeed(web)).to.deep.equal(before);
      expect((await call(web, 'GET', `/posts/${created.body.data.id}`)).status).to.equal(200);
      expect((await call(web, 'GET', '/communities')).status).to.equal(200);
      expect((await call(web, 'GET', '/discovery/trending')).status).to.equal(200);
      const h = await call(web, 'GET', '/health');
      expect(h.status).to.equal(200);
      expect(h.body.data.status).to.equal('degraded');
      expect(h.body.data.database.ok).to.equal(true);
      expect(h.body.data.replicas[0]).to.deep.include({ ok: false, lagMs: null, inUse: false });
      await web.reads.replicas.check();
      expect(web.said.filter((m) => /read replica unreachable/.test(m))).to.have.length(1);
      // Only that line: the replica pool's own connection errors are not repeated in the log.
      expect(web.said.filter((m) => m === 'database client')).to.deep.equal([]);
    } finally {
      await pair.startReplica();
    }
    const [status] = await web.reads.replicas.check();
    expect(status).to.deep.include({ ok: true, inUse: true });
    expect(web.said.filter((m) => m === 'read replica in use').length).to.equal(2);
    expect(await newFeed(web)).to.deep.equal(before);
  });

  it('a replica lagging beyond DATABASE_READ_MAX_LAG_MS is skipped until it catches up, said once each way', async () => {
    const { log, said } = recordingLogger();
    const strict = new ReadReplicas([pair.replicaUrl], 1000, log, 2, db);
    try {
      // Fit once it replayed a fresh commit (its lag is the age of the last commit it replayed
      // while WAL is still arriving, such as autovacuum's).
      const fit = async () => {
        let s = (await strict.check())[0];
        for (let i = 0; i < 20 && !s.inUse; i++) {
          await db.raw('select txid_current()');
          await caughtUp();
          s = (await strict.check())[0];
        }
        expect(s).to.deep.include({ ok: true, inUse: true });
        expect(s.lagMs).to.be.at.most(1000);
      };
      await fit();
      const from = said.length;
      expect(strict.pick()?.name).to.match(/^127\.0\.0\.1:\d+\/svc$/);
      await pair.pauseReplay();
      try {
        await newKey(); // a write the replica receives but does not replay
        for (let i = 0; i < 60 && (await strict.check())[0].inUse; i++) await new Promise((r) => setTimeout(r, 100));
        for (let i = 0; i < 3; i++) {
          const [s] = await strict.check();
          expect(s.ok).to.equal(true);
          expect(s.inUse).to.equal(false);
          expect(s.lagMs).to.be.greaterThan(1000);
        }
        expect(strict.pick(), 'reads go to the primary').to.equal(null);
        expect(said.slice(from).filter((m) => /lags beyond DATABASE_READ_MAX_LAG_MS/.test(m))).to.have.length(1);
      } finally {
        await pair.resumeReplay();
      }
      await caughtUp();
      await fit();
      expect(said.at(-1), 'said once it is back').to.equal('read replica in use');
    } finally {
      await strict.close();
    }
  });

  it("replay lag from the primary's sampled WAL positions: since the first position not replayed, 0 when caught up", () => {
    const samples = [
      { at: 1000, lsn: 100n },
      { at: 2000, lsn: 100n },
      { at: 3000, lsn: 250n },
      { at: 4000, lsn: 400n },
    ];
    expect(lagFromSamples(samples, 400n, 4500)).to.equal(0);
    expect(lagFromSamples(samples, 300n, 4500), 'behind the WAL written by 4000').to.equal(500);
    expect(lagFromSamples(samples, 100n, 4500), 'behind the WAL written by 3000').to.equal(1500);
    expect(lagFromSamples(samples, 50n, 4500), 'behind every sample').to.equal(3500);
    expect(lagFromSamples([], 50n, 4500), 'no sample: unknown').to.equal(null);
  });

  it('DATABASE_READ_URL: several replicas comma-separated, checked as URLs; unset, nothing is routed', () => {
    const base = { NODE_ENV: 'test', DATABASE_URL: 'postgres://u:secret@db/svc' };
    const c = loadConfig({ ...base, DATABASE_READ_URL: 'postgres://u:secret@r1/svc, postgres://u:secret@r2:6432/svc' });
    expect(c.databaseReadUrls).to.deep.equal(['postgres://u:secret@r1/svc', 'postgres://u:secret@r2:6432/svc']);
    expect(c.databaseReadMaxLagMs).to.equal(5000);
    expect(() => loadConfig({ ...base, DATABASE_READ_URL: 'mysql://r1/svc' })).to.throw(
      ConfigError,
      'DATABASE_READ_URL',
    );
    expect(() => loadConfig({ NODE_ENV: 'test', DATABASE_READ_URL: 'postgres://r1/svc' })).to.throw(
      ConfigError,
      'DATABASE_READ_URL needs DATABASE_URL',
    );
    expect(createReadRouting(loadConfig(base), createLogger('silent'))).to.equal(undefined);
  });
});
