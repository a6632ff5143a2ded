import crypto from 'crypto';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { ConfigError, loadConfig } from '../../src/config';
import { EventEmitter } from 'events';
import { beatIntervalMs, recoverStaleWorkers, WorkerLiveness } from '../../src/db/worker-liveness';
import { runWithLiveness } from '../../src/worker-runner';
import { Logger, WorkerEventMap, WorkerEvents } from 'graphile-worker';

/**
 * Crash recovery rules of src/db/worker-liveness.ts against the real graphile-worker schema:
 * which lock holders are presumed dead, and that a live one never is. Each test uses its own
 * task identifiers and worker ids, so nothing else in the shared database is touched.
 */
const uid = () => crypto.randomBytes(6).toString('hex');

async function lockedJob(
  holder: string | null,
  lockedSecondsAgo: number,
  opts: { queue?: string } = {},
): Promise<{ id: string; task: string }> {
  const { db } = await getContext();
  const task = `liveness_${uid()}`;
  // A task no worker has (so the job stays queued): not one of the job map's, so added in SQL.
  await db.raw(`select graphile_worker.add_job(?, '{}'::json, queue_name => ?)`, [task, opts.queue ?? null]);
  const r = await db.raw(
    `select j.id from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = ?`,
    [task],
  );
  const id = String(r.rows[0].id);
  if (holder) {
    await db.raw(
      `update graphile_worker._private_jobs set locked_by = ?, locked_at = now() - make_interval(secs => ?), attempts = 1 where id = ?`,
      [holder, lockedSecondsAgo, id],
    );
    if (opts.queue)
      await db.raw(
        `update graphile_worker._private_job_queues set locked_by = ?, locked_at = now() - make_interval(secs => ?) where queue_name = ?`,
        [holder, lockedSecondsAgo, opts.queue],
      );
  }
  return { id, task };
}

async function holderOf(jobId: string): Promise<string | null> {
  const { db } = await getContext();
  const r = await db.raw('select locked_by from graphile_worker._private_jobs where id = ?', [jobId]);
  return r.rows[0].locked_by;
}

async function heartbeat(workerId: string, secondsAgo: number, workerIds: string[] = []): Promise<void> {
  const { db } = await getContext();
  await db('worker_heartbeats').insert({
    worker_id: workerId,
    worker_ids: workerIds,
    hostname: 'test',
    pid: 1,
    last_seen: db.raw('now() - make_interval(secs => ?)', [secondsAgo]),
  });
}

describe("worker liveness: automatic release of dead workers' job locks", function () {
  this.timeout(20000);

  it('releases the job and queue locks of a worker whose heartbeat is older than the bound, and removes its row', async () => {
    const { db } = await getContext();
    const dead = `pool-dead-${uid()}`;
    await heartbeat(dead, 45, [`worker-dead-${uid()}`]);
    const job = await lockedJob(dead, 50);
    const queued = await lockedJob(dead, 50, { queue: `q_${uid()}` });
    const r = await recoverStaleWorkers(db, 30);
    expect(r.workerIds).to.include(dead);
    expect(r.jobs).to.be.greaterThanOrEqual(2);
    expect(r.queues).to.be.greaterThanOrEqual(1);
    expect(await holderOf(job.id)).to.equal(null);
    expect(await holderOf(queued.id)).to.equal(null);
    const q = await db.raw(`select locked_by from graphile_worker._private_job_queues where locked_by = ?`, [dead]);
    expect(q.rows).to.have.length(0);
    expect(await db('worker_heartbeats').where({ worker_id: dead }).first()).to.equal(undefined);
  });

  it('never releases a live worker: a fresh heartbeat keeps a lock held far longer than the bound', async () => {
    const { db } = await getContext();
    const live = `pool-live-${uid()}`;
    await heartbeat(live, 1);
    const job = await lockedJob(live, 3600);
    const r = await recoverStaleWorkers(db, 30);
    expect(r.workerIds).to.not.include(live);
    expect(await holderOf(job.id)).to.equal(live);
    expect(await db('worker_heartbeats').where({ worker_id: live }).first()).to.not.equal(undefined);
  });

  it('a lock holder known only by one of its worker ids counts as alive', async () => {
    const { db } = await getContext();
    const pool = `pool-${uid()}`;
    const w = `worker-${uid()}`;
    await heartbeat(pool, 1, [w]);
    const job = await lockedJob(w, 600);
    await recoverStaleWorkers(db, 30);
    expect(await holderOf(job.id)).to.equal(w);
  });

  it('a holder without any heartbeat row is released once its locks are older than the bound, not before', async () => {
    const { db } = await getContext();
    const old = await lockedJob(`pool-orphan-${uid()}`, 120);
    const young = await lockedJob(`pool-young-${uid()}`, 5);
    const r = await recoverStaleWorkers(db, 30);
    expect(await holderOf(old.id)).to.equal(null);
    expect(await holderOf(young.id)).to.not.equal(null);
    expect(r.workerIds.some((id) => id.startsWith('pool-young-'))).to.equal(false);
  });

  it('never releases its own ids, even with a stale row', async () => {
    const { db } = await getContext();
    const self = `pool-self-${uid()}`;
    await heartbeat(self, 300);
    const job = await lockedJob(self, 300);
    const r = await recoverStaleWorkers(db, 30, [self]);
    expect(r.workerIds).to.not.include(self);
    expect(await holderOf(job.id)).to.equal(self);
    await db('worker_heartbeats').where({ worker_id: self }).delete();
    await db.raw('select graphile_worker.force_unlock_workers(?::text[])', [[self]]);
  });

  it('8 workers recovering at once release a dead worker exactly once', async () => {
    const { db } = await getContext();
    const dead = `pool-race-${uid()}`;
    await heartbeat(dead, 100);
    const jobs = await Promise.all([1, 2, 3].map(() => lockedJob(dead, 100)));
    const results = await Promise.all(Array.from({ length: 8 }, () => recoverStaleWorkers(db, 30)));
    const mine = results.filter((r) => r.workerIds.includes(dead));
    expect(mine).to.have.length(1);
    expect(mine[0].jobs).to.equal(3);
    for (const j of jobs) expect(await holderOf(j.id)).to.equal(null);
  });

  it("a running worker registers its pool and worker ids, runs a dead worker's job within the bound, and removes its row on stop", async () => {
    const ctx = await getContext();
    const deps = { ...ctx.deps, config: { ...ctx.deps.config, workerStaleSeconds: 2 } };
    const dead = `pool-killed-${uid()}`;
    await heartbeat(dead, 0);
    const job = await lockedJob(dead, 0);
    const ran: string[] = [];
    const runner = await runWithLiveness(deps, {
      connectionString: ctx.databaseUrl,
      concurrency: 2,
      taskList: { [job.task]: async () => void ran.push(job.task) },
      noHandleSignals: true,
      pollInterval: 100,
      crontab: '',
      logger: new Logger(() => () => undefined),
    });
    let stopped = false;
    try {
      const row = await ctx.db('worker_heartbeats').where({ pid: process.pid }).whereNot('worker_id', dead).first();
      expect(row.worker_id).to.match(/^pool-/);
      expect(row.worker_ids).to.have.length(2);
      const t0 = Date.now();
      while (ran.length === 0 && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 50));
      expect(ran, "the dead worker's job ran").to.deep.equal([job.task]);
      const waited = Date.now() - t0;
      // The dead row was fresh at start: the job stays locked until the bound passes.
      expect(waited).to.be.greaterThan(1500);
      expect(waited).to.be.lessThan(5000);
      expect(await ctx.db('worker_heartbeats').where({ worker_id: dead }).first()).to.equal(undefined);
      stopped = true;
      await runner.stop();
      expect(await ctx.db('worker_heartbeats').where({ worker_id: row.worker_id }).first()).to.equal(undefined);
    } finally {
      if (!stopped) await runner.stop();
    }
  });

  it('a worker releases others only after beating for a whole bound itself (back from an outage, it waits for the rest to beat)', async () => {
    const { db, deps } = await getContext();
    const dead = `pool-outage-${uid()}`;
    await heartbeat(dead, 100);
    const job = await lockedJob(dead, 100);
    let t = 0;
    const l = new WorkerLiveness(db, deps.log, 30, () => t);
    const events = new EventEmitter() as WorkerEvents;
    l.attach(events);
    const me = `pool-me-${uid()}`;
    events.emit('pool:create', { workerPool: { id: me } } as unknown as WorkerEventMap['pool:create']);
    await l.tick();
    expect(await db('worker_heartbeats').where({ worker_id: me }).first()).to.not.equal(undefined);
    expect(await holderOf(job.id), 'first beat: no release yet').to.equal(dead);
    t = 29_000;
    await l.tick();
    expect(await holderOf(job.id)).to.equal(dead);
    t = 30_000;
    await l.tick();
    expect(await holderOf(job.id), 'a bound of healthy beats: released').to.equal(null);
    await l.stop();
    expect(await db('worker_heartbeats').where({ worker_id: me }).first()).to.equal(undefined);
  });

  it('WORKER_STALE_SECONDS: default 30 s (a beat every 5 s), validated', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).workerStaleSeconds).to.equal(30);
    expect(loadConfig({ NODE_ENV: 'test', WORKER_STALE_SECONDS: '5' }).workerStaleSeconds).to.equal(5);
    expect(beatIntervalMs(30)).to.equal(5000);
    expect(beatIntervalMs(2)).to.equal(333);
    for (const bad of ['abc', '1', '3601', '-5', '2.5']) {
      expect(() => loadConfig({ NODE_ENV: 'test', WORKER_STALE_SECONDS: bad }), bad).to.throw(
        ConfigError,
        /WORKER_STALE_SECONDS/,
      );
    }
  });
});
