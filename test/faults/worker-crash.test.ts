import { createQuery } from '../../src/db/query';
import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { createLimiter } from '../../src/limits';
import type { Deps } from '../../src/deps';
import { migrateAll } from '../../src/db/migrate';
import { addJob } from '../../src/db/jobs';
import { enqueue } from '../../src/scoring/service';
import type { JobName } from '../../src/db/jobs';
import { SCORING_LOCK } from '../../src/scoring/transaction';
import { getWindowClock } from '../../src/scoring/watermark';
import { ScoringPool } from '../../src/scoring/pool';
import { Caches } from '../../src/caches';
import { createAgent } from '../../src/identity/service';
import { createWebhook } from '../../src/webhooks/service';
import { emitEvent } from '../../src/events/emit';
import { generateNetwork, Network } from '../../bench/gen/network';
import {
  faultEnv,
  freePort,
  startPrivateServices,
  openDb,
  PrivatePostgres,
  PrivateRedis,
  sleep,
  stopChild,
} from './harness';
import {
  cleanRecompute,
  Observer,
  queuedJobs,
  ScoringState,
  sigkill,
  startWorkerProc,
  storedState,
  waitFor,
  WorkerProc,
} from './workers';

/**
 * Real worker processes (`src/worker.ts`) against a private PostgreSQL, SIGKILLed in the middle
 * of their work. Promises checked: the next worker releases a dead worker's jobs by itself
 * (heartbeat older than WORKER_STALE_SECONDS, no manual unlock) and every job finishes; scoring
 * snapshots are whole or absent at every moment and equal to a clean single-process recompute;
 * two workers together serialise and count once; a live worker's jobs are never released.
 */
const STALE_SECONDS = 3;
const SCORING_TASKS: JobName[] = [
  'scoring_incremental',
  'reputation_recompute',
  'leaderboards_refresh',
  'leaderboards_freeze',
];

describe('faults: worker processes killed mid-job (real worker processes)', function () {
  this.timeout(120_000);
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let db: Knex;
  let env: NodeJS.ProcessEnv;
  let deps: Deps;
  let agents = 0;
  let net: Network;
  const workers: WorkerProc[] = [];
  const report: string[] = [];

  async function worker(): Promise<WorkerProc> {
    const w = await startWorkerProc(db, env);
    workers.push(w);
    return w;
  }

  function expectSameState(got: ScoringState, want: ScoringState, weeks?: string[]) {
    expect(got.edges, 'scoring_edges').to.deep.equal(want.edges);
    expect(got.reputations, 'reputation_scores').to.deep.equal(want.reputations);
    const keys = weeks
      ? [...want.snapshots.keys()].filter((k) => weeks.includes(k.split('/')[0]))
      : [...want.snapshots.keys()];
    expect(keys.length).to.be.greaterThan(0);
    for (const k of keys)
      expect(got.snapshots.get(k)?.entries, `snapshot ${k}`).to.deep.equal(want.snapshots.get(k)!.entries);
  }

  before(async function () {
    this.timeout(180_000);
    ({ pg, redis } = await startPrivateServices());
    env = {
      ...faultEnv(pg, redis, await freePort()),
      WORKER_STALE_SECONDS: String(STALE_SECONDS),
      SCORING_POOL_SIZE: '1',
      WORKER_CONCURRENCY: '2',
    };
    db = openDb(pg.url);
    await migrateAll(db, pg.url);
    const config = loadConfig(env);
    const log = createLogger('silent');
    deps = {
      config,
      log,
      db,
      query: createQuery(db),
      limiter: createLimiter(loadConfig({ ...env, REDIS_URL: '' }), log),
      caches: new Caches(config.nodeEnv),
      scoringPool: new ScoringPool(2),
      now: () => new Date(),
    };
    const t0 = Date.now();
    net = await generateNetwork(
      db,
      { interactions: Number(process.env.FAULT_SCORING_INTERACTIONS || 30_000) },
      new Date(),
    );
    agents = Number((await db.raw('select count(*)::int n from agents')).rows[0].n);
    report.push(`seeded ${net.interactions} interactions, ${agents} agents in ${Date.now() - t0} ms`);
  });

  // A failed test leaves no worker behind to take the next test's jobs (they are SIGKILLed, and
  // their locks are released like any dead worker's).
  afterEach(async () => {
    for (const w of workers.splice(0)) await sigkill(w.child);
  });

  after(async function () {
    this.timeout(60_000);
    if (report.length) console.log(report.map((l) => '      ' + l).join('\n'));
    await deps?.scoringPool.destroy();
    await deps?.limiter.close();
    await db?.destroy();
    await redis?.kill();
    await pg?.destroy();
  });

  it('SIGKILL during a full reputation + leaderboard recompute: the next worker releases the job itself, it completes, snapshots are never half-written and equal a clean recompute', async () => {
    const obs = new Observer(db);
    obs.start();
    await enqueue(db, 'reputation_recompute', {});
    await enqueue(db, 'leaderboards_refresh', {});
    const w1 = await worker();
    // Mid-run: the job is locked by w1 and a backend holds the scoring lock (its transaction is open).
    await waitFor(
      async () => {
        const jobs = await queuedJobs(db, ['reputation_recompute']);
        const lock = await db.raw(
          `select count(*)::int n from pg_locks where locktype = 'advisory' and objid = ? and granted`,
          [SCORING_LOCK],
        );
        return jobs.some((j) => j.locked_by === w1.poolId) && lock.rows[0].n > 0;
      },
      30_000,
      'the recompute to start in w1',
    );
    await sleep(300);
    await sigkill(w1.child);
    const killedAt = Date.now();

    // The dead worker's row and lock stay behind; nothing of its run is visible.
    const held = await queuedJobs(db, ['reputation_recompute']);
    expect(
      held.map((j) => j.locked_by),
      'the job was still running when w1 died',
    ).to.include(w1.poolId);
    expect(await db('worker_heartbeats').where({ worker_id: w1.poolId }).first()).to.not.equal(undefined);
    expect(Number((await db.raw('select count(*)::int n from reputation_scores')).rows[0].n)).to.equal(0);

    const w2 = await worker();
    const startedAt = Date.now();
    await waitFor(
      async () => (await queuedJobs(db, SCORING_TASKS)).length === 0,
      60_000,
      'every scoring job to finish',
    );
    const doneMs = Date.now() - killedAt;
    await obs.stop();

    expect(
      await db('worker_heartbeats').where({ worker_id: w1.poolId }).first(),
      'w1 presumed dead and removed',
    ).to.equal(undefined);
    expect(await db('worker_heartbeats').where({ worker_id: w2.poolId }).first()).to.not.equal(undefined);
    expect(obs.samples, 'the observer sampled the run').to.be.greaterThan(10);
    expect(obs.violations, obs.violations.join('\n')).to.deep.equal([]);
    expect([...obs.errors], 'failed attempts').to.deep.equal([]);
    // Reputation rows: none until the recovered run committed, then all agents at once.
    expect(
      [...obs.repCounts].every((n) => n === 0 || n === agents),
      [...obs.repCounts].join(','),
    ).to.equal(true);
    expect([...obs.lockHolders()]).to.include.members([w1.poolId, w2.poolId]);

    const got = await storedState(db);
    expect(got.reputations.n).to.equal(agents);
    const weeks = new Set([...got.snapshots.keys()].map((k) => k.split('/')[0]));
    expect(got.snapshots.size).to.equal(weeks.size * 6);
    const ranked = [...got.snapshots.values()].reduce((n, s) => n + (s.entries as unknown[]).length, 0);
    expect(ranked, 'the snapshots rank agents').to.be.greaterThan(100);
    expectSameState(got, await cleanRecompute(db));
    report.push(
      `recompute crash: w1 killed mid-run; w2 up ${startedAt - killedAt} ms later; all scoring jobs done ${doneMs} ms after the kill ` +
        `(stale bound ${STALE_SECONDS} s); ${obs.samples} samples, 0 half-written; ${weeks.size} weeks x 6 snapshots equal a clean recompute`,
    );
    await stopChild(w2.child);
    // Graceful shutdown removes the heartbeat: nobody has to presume w2 dead.
    expect(await db('worker_heartbeats').where({ worker_id: w2.poolId }).first()).to.equal(undefined);
  });

  it('two worker processes on the same recompute jobs: serialised, nothing counted twice, no live worker released, result equals a single clean run', async () => {
    const finalsBefore = (await storedState(db)).snapshots;
    await net.addActivity(db, 2000, new Date(Date.now() - 60_000), new Date());
    const obs = new Observer(db);
    obs.start();
    // The test holds the scoring lock first, as a long recompute would: both workers' jobs then
    // stay locked (by live workers) longer than the stale bound, and must not be released.
    const hold = await db.transaction();
    await hold.raw('select pg_advisory_xact_lock(?)', [SCORING_LOCK]);
    let wa: WorkerProc, wb: WorkerProc;
    let released: Date;
    try {
      [wa, wb] = await Promise.all([worker(), worker()]);
      // Several runs of each kind without job keys. A worker locks at most its 2 running jobs and
      // the 3 its local queue fetches ahead (graphileRunOptions): with 6 queued, both take some.
      for (let i = 0; i < 3; i++) {
        await addJob(db, 'reputation_recompute', {});
        await addJob(db, 'leaderboards_refresh', {});
      }
      await waitFor(
        async () => new Set((await queuedJobs(db, SCORING_TASKS)).map((j) => j.locked_by).filter(Boolean)).size === 2,
        20_000,
        'both workers to take jobs',
      );
      await sleep((STALE_SECONDS + 1.5) * 1000);
    } finally {
      // Every run starts after this (its clock is read once it holds the lock).
      released = new Date();
      await hold.commit();
    }
    const t0 = Date.now();
    await waitFor(
      async () => (await queuedJobs(db, SCORING_TASKS)).length === 0,
      90_000,
      'every scoring job to finish',
    );
    const ms = Date.now() - t0;
    await obs.stop();

    expect(obs.violations, obs.violations.join('\n')).to.deep.equal([]);
    expect([...obs.errors], 'failed attempts').to.deep.equal([]);
    expect(obs.doublyHeld(), 'a job released while its worker was alive').to.deep.equal([]);
    // Jobs waited on the scoring lock longer than the stale bound, and were still not released.
    expect(obs.longestHoldMs()).to.be.greaterThan((STALE_SECONDS + 1) * 1000);
    expect([...obs.lockHolders()]).to.include.members([wa.poolId, wb.poolId]);
    expect([...obs.repCounts]).to.deep.equal([agents]);
    for (const w of [wa, wb])
      expect(await db('worker_heartbeats').where({ worker_id: w.poolId }).first(), 'both alive').to.not.equal(
        undefined,
      );

    const got = await storedState(db);
    // The window is the last run's: rows spread over all 90 days leave it between that run and now.
    const clock = await getWindowClock(db);
    expect(clock?.getTime(), 'the last run came after the activity and the lock').to.be.at.least(released!.getTime());
    const active = await db.raw(
      `select count(*)::int n from interactions where active and occurred_at > ?::timestamptz - interval '90 days' and occurred_at <= ?`,
      [clock, clock],
    );
    expect(got.edges.n, 'one weight per interaction').to.equal(active.rows[0].n);
    expect(got.reputations.n, 'one reputation per agent').to.equal(agents);
    for (const [k, s] of got.snapshots) {
      const ids = (s.entries as { agent: { id: string }; rank: number }[]).map((e) => e.agent.id);
      expect(new Set(ids).size, `${k}: each agent once`).to.equal(ids.length);
      expect((s.entries as { rank: number }[]).map((e) => e.rank)).to.deep.equal(ids.map((_, i) => i + 1));
    }
    // Final weeks are untouched; the live week and everything else equal a single clean run.
    for (const [k, s] of finalsBefore) if (s.status === 'final') expect(got.snapshots.get(k), k).to.deep.equal(s);
    const live = [...got.snapshots.entries()].filter(([, s]) => s.status === 'live').map(([k]) => k.split('/')[0]);
    expect(live.length).to.be.greaterThan(0);
    expectSameState(got, await cleanRecompute(db), live);
    report.push(
      `two workers: 6 scoring jobs split over both (${obs.lockHolders().size} lock holders), done in ${ms} ms; equal to a clean single run; ` +
        `no job ever held by two workers, longest lock held by a live worker ${obs.longestHoldMs()} ms (stale bound ${STALE_SECONDS * 1000} ms)`,
    );
    await Promise.all([stopChild(wa.child), stopChild(wb.child)]);
  });

  it('SIGKILL during webhook delivery: after a restart (no manual unlock) every event is delivered at least once', async () => {
    let hang = true;
    const received: { id: string }[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push({ id: String(req.headers['webhook-id'] ?? '') });
        if (!hang) res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    try {
      const [owner] = await db('owners')
        .insert({ email: `crash${Date.now()}@example.test`, password_hash: 'x' })
        .returning('id');
      const agent = await createAgent(db, {
        handle: `crash_${Date.now().toString(36)}`,
        displayName: 'Crash',
        ownerId: owner.id,
      });
      const hook = await createWebhook(deps, owner.id, agent.id, { url, events: ['agent.mentioned'] });
      const N = 16;
      const eventIds: string[] = [];
      for (let i = 0; i < N; i++)
        eventIds.push(
          await db.transaction((trx) => emitEvent(trx, { type: 'agent.mentioned', agentId: agent.id, data: { n: i } })),
        );

      const w1 = await worker();
      await waitFor(async () => received.length >= 2, 30_000, 'deliveries in flight');
      await sigkill(w1.child);
      const killedAt = Date.now();
      const inFlight = received.length;
      const locked = (
        await db.raw(`select count(*)::int n from graphile_worker._private_jobs where locked_by = any(?)`, [w1.poolIds])
      ).rows[0].n;
      expect(locked, 'w1 died holding jobs').to.be.greaterThan(0);

      hang = false;
      await worker();
      await waitFor(
        async () =>
          Number(
            (
              await db('webhook_deliveries')
                .where({ webhook_id: hook.id, status: 'succeeded' })
                .count<{ n: number }[]>('* as n')
            )[0].n,
          ) === N,
        40_000,
        'every delivery to succeed',
      );
      const ms = Date.now() - killedAt;
      // Every job finishes: no fan-out or delivery job is left in the queue (retrying or locked).
      await waitFor(
        async () => (await queuedJobs(db, ['event_fanout', 'webhook_deliver'])).length === 0,
        10_000,
        'the delivery jobs to leave the queue',
      );
      const delivered = new Set(received.map((r) => r.id));
      for (const id of eventIds) expect(delivered.has(id), id).to.equal(true);
      const rows = await db('webhook_deliveries').where({ webhook_id: hook.id });
      expect(new Set(rows.map((r) => r.event_id))).to.deep.equal(new Set(eventIds));
      expect(await db('worker_heartbeats').whereIn('worker_id', w1.poolIds).first()).to.equal(undefined);
      report.push(
        `delivery crash: w1 killed with ${inFlight} requests in flight and ${locked} jobs locked; all ${N} events delivered ${ms} ms after the kill (${received.length} requests, at-least-once)`,
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
