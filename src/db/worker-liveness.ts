import os from 'os';
import type { Knex } from 'knex';
import type { WorkerEvents } from 'graphile-worker';
import type { Logger } from '../log';

/**
 * Worker liveness and crash recovery. graphile-worker 0.17 leaves the job locks of a worker that
 * died (SIGKILL, OOM, lost host) in place for 4 hours. Every worker process therefore keeps a
 * heartbeat row (its pool id, which is what graphile writes into `locked_by`, and its worker
 * ids) fresh every few seconds, and at start and on every beat releases the locks of:
 *  - workers whose heartbeat is older than the stale bound (their row is removed), and
 *  - lock holders that have no heartbeat row at all and whose locks are older than the bound
 *    (a worker that died before registering, or a process without liveness).
 * A live worker beats far more often than the bound, so its locks are never released; all
 * staleness is judged on the database's clock, so hosts with skewed clocks agree. A worker only
 * releases others once it has itself beaten without a failure for a whole bound: after a
 * database outage longer than the bound every row is stale, and the first worker back must not
 * release the others before they have had the chance to beat again.
 */

export interface HeartbeatIdentity {
  workerId: string;
  workerIds: string[];
  hostname: string;
  pid: number;
}

export interface RecoveryResult {
  /** lock holders presumed dead and released */
  workerIds: string[];
  /** job and queue locks released */
  jobs: number;
  queues: number;
}

/** Registers or refreshes a heartbeat (re-creates it if another worker removed it). */
export async function beat(db: Knex, id: HeartbeatIdentity): Promise<void> {
  await db.raw(
    `insert into worker_heartbeats (worker_id, worker_ids, hostname, pid) values (?, ?::text[], ?, ?)
     on conflict (worker_id) do update set last_seen = now(), worker_ids = excluded.worker_ids`,
    [id.workerId, id.workerIds, id.hostname, id.pid],
  );
}

export async function removeHeartbeat(db: Knex, workerId: string): Promise<void> {
  await db('worker_heartbeats').where({ worker_id: workerId }).delete();
}

/**
 * Releases the job locks of dead workers (see the module comment) in one transaction. `selfIds`
 * are never released, whatever their rows say. Safe to run from several workers at once: the
 * second finds nothing left to do.
 */
export async function recoverStaleWorkers(
  db: Knex,
  staleSeconds: number,
  selfIds: string[] = [],
): Promise<RecoveryResult> {
  return db.transaction(async (trx) => {
    const r = await trx.raw(
      `with stale as (
         delete from worker_heartbeats
         where last_seen < now() - make_interval(secs => :s) and worker_id <> all(:self::text[])
         returning worker_id, worker_ids
       ),
       known as (select worker_id id from worker_heartbeats union select unnest(worker_ids) from worker_heartbeats),
       held as (
         select locked_by id from graphile_worker._private_jobs where locked_by is not null and locked_at < now() - make_interval(secs => :s)
         union select locked_by from graphile_worker._private_job_queues where locked_by is not null and locked_at < now() - make_interval(secs => :s)
       )
       select array(
         select worker_id from stale
         union select unnest(worker_ids) from stale
         union select id from held where id not in (select id from known)
       ) ids`,
      { s: staleSeconds, self: selfIds },
    );
    const ids: string[] = (r.rows[0].ids as string[]).filter((id) => !selfIds.includes(id));
    if (ids.length === 0) return { workerIds: [], jobs: 0, queues: 0 };
    const c = await trx.raw(
      `select (select count(*) from graphile_worker._private_jobs where locked_by = any(:ids::text[]))::int jobs,
              (select count(*) from graphile_worker._private_job_queues where locked_by = any(:ids::text[]))::int queues`,
      { ids },
    );
    await trx.raw('select graphile_worker.force_unlock_workers(?::text[])', [ids]);
    return { workerIds: ids, jobs: c.rows[0].jobs, queues: c.rows[0].queues };
  });
}

/** Beat period for a stale bound: six beats fit in it, so a few lost beats never look like death. */
export function beatIntervalMs(staleSeconds: number): number {
  return Math.max(250, Math.floor((staleSeconds * 1000) / 6));
}

/**
 * The liveness loop of one worker process. Attach it to the runner's event emitter before
 * `run()` (the pool announces its id there), then `start()` once the runner is up and `stop()`
 * after the runner has stopped (its jobs are released or done, so the row can go).
 */
export class WorkerLiveness {
  private poolId: string | null = null;
  private workerIds: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = false;
  private stopping: Promise<void> | null = null;
  /** monotonic ms of the first beat of the current unbroken run of successful beats */
  private healthySince: number | null = null;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    readonly staleSeconds: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  attach(events: WorkerEvents): void {
    events.on('pool:create', ({ workerPool }) => {
      this.poolId = workerPool.id;
    });
    events.on('worker:create', ({ worker }) => {
      this.workerIds.push(worker.workerId);
    });
  }

  /** The id this process's jobs are locked by (null before the pool exists). */
  get id(): string | null {
    return this.poolId;
  }

  private identity(): HeartbeatIdentity | null {
    if (!this.poolId) return null;
    return { workerId: this.poolId, workerIds: this.workerIds, hostname: os.hostname(), pid: process.pid };
  }

  /**
   * One beat, then a recovery sweep if this worker has been beating for a whole bound. Failures
   * (database down) are logged and retried on the next beat.
   */
  tick(): Promise<void> {
    if (this.stopped) return this.ticking ?? Promise.resolve();
    this.ticking ??= (async () => {
      try {
        const me = this.identity();
        try {
          if (me) await beat(this.db, me);
          else await this.db.raw('select 1');
        } catch (e) {
          this.healthySince = null;
          throw e;
        }
        this.healthySince ??= this.clock();
        if (this.clock() - this.healthySince < this.staleSeconds * 1000) return;
        const r = await recoverStaleWorkers(this.db, this.staleSeconds, me ? [me.workerId, ...me.workerIds] : []);
        if (r.workerIds.length)
          this.log.warn(
            { deadWorkers: r.workerIds, jobs: r.jobs, queues: r.queues },
            'released the job locks of dead workers',
          );
      } catch (e) {
        this.log.warn({ err: e }, 'worker heartbeat failed');
      } finally {
        this.ticking = null;
      }
    })();
    return this.ticking;
  }

  async start(): Promise<void> {
    if (this.timer || this.stopped) return;
    await this.tick();
    if (this.stopped) return;
    this.timer = setInterval(() => void this.tick(), beatIntervalMs(this.staleSeconds));
    this.timer.unref();
  }

  /** Ends the loop and removes this worker's row (graceful shutdown). Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      if (this.ticking) await this.ticking;
      if (this.poolId) {
        try {
          await removeHeartbeat(this.db, this.poolId);
        } catch (e) {
          this.log.warn({ err: e }, 'could not remove the worker heartbeat');
        }
      }
    })();
    return this.stopping;
  }
}
