import { EventEmitter } from 'events';
import path from 'path';
import { run, Runner, RunnerOptions, WorkerEvents } from 'graphile-worker';
import type { Deps } from './deps';
import { buildFleetTaskList, buildTaskList } from '../jobs';
import { repoRoot } from './db/paths';
import { WorkerLiveness } from './db/worker-liveness';
import { createDb } from './db/knex';
import { workerLogger } from './worker-log';

/**
 * graphile-worker `run()` with crash recovery: the process keeps a heartbeat row and releases
 * the job locks of workers that died (src/db/worker-liveness.ts), so a SIGKILLed worker's jobs
 * run again within WORKER_STALE_SECONDS instead of graphile's 4 hours. `stop()` removes the
 * heartbeat once the runner has stopped.
 */
export async function runWithLiveness(deps: Deps, options: RunnerOptions): Promise<Runner> {
  const events = (options.events ?? new EventEmitter()) as WorkerEvents;
  // Its own connection: long jobs holding the main pool never delay a beat into looking dead.
  const own = options.connectionString ? createDb(options.connectionString, 1) : null;
  const liveness = new WorkerLiveness(own ?? deps.db, deps.log, deps.config.workerStaleSeconds);
  let ended: Promise<void> | undefined;
  const end = () =>
    (ended ??= liveness.stop().finally(async () => {
      await own?.destroy();
    }));
  liveness.attach(events);
  let runner: Runner;
  try {
    runner = await run({ ...options, events });
  } catch (e) {
    await end();
    throw e;
  }
  await liveness.start();
  // A runner that ends by itself (fatal error) stops beating too, so its locks get released.
  void runner.promise.then(end, end);
  return {
    ...runner,
    stop: async (reason?: string) => {
      try {
        await runner.stop(reason);
      } finally {
        await end();
      }
    },
    kill: async (reason?: string) => {
      try {
        await runner.kill(reason);
      } finally {
        await end();
      }
    },
  };
}

export interface BatchingOptions {
  /** Jobs fetched (and locked) per query into the pool's local queue; -1 fetches one per worker. Default concurrency + 1. */
  localQueueSize?: number;
  /** Milliseconds job completions wait to be written together; -1 writes each at once. Default 10. */
  completeJobBatchDelay?: number;
}

/**
 * The graphile-worker options the worker runs with (bench/fanout.ts measures the same). Jobs are
 * fetched `concurrency + 1` at a time into the pool's local queue (one locking query for many
 * jobs, and the next job is at hand when one ends) and completions are written in batches, those
 * ending within 10 ms of each other together (a task's slot does not wait for its completion's
 * commit, and one statement deletes many jobs). Measured on the webhook fan-out, one
 * webhook per event at concurrency 16: PostgreSQL CPU per delivery about halved, node's a quarter
 * less (BENCHMARKS.md). What it costs: a worker locks up to `concurrency + 1` jobs more than it
 * runs (the queue fetches again once its last job is handed out, even with every task busy), and a
 * worker killed within a batch's few milliseconds leaves completed jobs locked, which run again
 * once its locks are released (src/db/worker-liveness.ts); every job is idempotent.
 */
export function graphileRunOptions(
  concurrency: number,
  b: BatchingOptions = {},
): Pick<RunnerOptions, 'concurrency' | 'pollInterval' | 'preset'> {
  const localQueueSize = b.localQueueSize ?? concurrency + 1;
  const completeJobBatchDelay = b.completeJobBatchDelay ?? 10;
  return {
    concurrency,
    pollInterval: 1000,
    preset: {
      worker: {
        ...(localQueueSize > 1 ? { localQueue: { size: localQueueSize } } : {}),
        completeJobBatchDelay,
      },
    },
  };
}

/**
 * Starts graphile-worker with the project's task list and crontab, and beside it the fleet
 * runner: the tasks of FLEET_TASKS, one job at a time and fetched one at a time (no local
 * queue), so a process never holds a second partition of a full recompute that an idle process
 * could run. Returned as one runner: stopping it stops both.
 */
export async function startWorker(deps: Deps, connectionString: string): Promise<Runner> {
  const runner = await runWithLiveness(deps, {
    connectionString,
    ...graphileRunOptions(deps.config.workerConcurrency),
    taskList: buildTaskList(deps),
    crontabFile: path.join(repoRoot, 'jobs', 'crontab'),
    noHandleSignals: true,
    logger: workerLogger(deps.log),
  });
  let fleet: Runner;
  try {
    fleet = await runWithLiveness(deps, {
      connectionString,
      ...graphileRunOptions(1, { localQueueSize: -1 }),
      taskList: buildFleetTaskList(deps),
      // No schedules here (the first runner has the crontab); an empty list, or graphile looks for
      // ./crontab and logs "cron is disabled", which reads as if the service's schedules were off.
      parsedCronItems: [],
      noHandleSignals: true,
      logger: workerLogger(deps.log),
    });
  } catch (e) {
    await runner.stop();
    throw e;
  }
  const both = Promise.all([runner.promise, fleet.promise]).then(() => undefined);
  // The scoring thread pool ends with the runners (graceful shutdown stops them).
  const endPool = () => deps.scoringPool.destroy();
  void both.then(endPool, endPool);
  return {
    ...runner,
    promise: both,
    stop: async (reason?: string) => {
      await Promise.all([runner.stop(reason), fleet.stop(reason)]);
    },
    kill: async (reason?: string) => {
      await Promise.all([runner.kill(reason), fleet.kill(reason)]);
    },
  };
}
