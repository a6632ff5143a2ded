import { EventEmitter } from 'events';
import path from 'path';
import { run, Runner, RunnerOptions, WorkerEvents } from 'graphile-worker';
import type { Deps } from './deps';
import { buildDeliveryTaskList, buildFleetTaskList, buildTaskList } from '../jobs';
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
 * A runner's graphile-worker options (the main runner's as they are). Jobs are fetched
 * `concurrency + 1` at a time into the pool's local queue (one locking query for many jobs, and
 * the next job is at hand when one ends) and completions are written in batches, those ending
 * within 10 ms of each other together (a task's slot does not wait for its completion's commit,
 * and one statement deletes many jobs). Measured on the webhook fan-out, one webhook per event at
 * concurrency 16, 10 ms against a batch per tick: 8-9 jobs per completion statement instead of 3-4,
 * CPU per delivery 920-1060 µs against 1130-1530 (BENCHMARKS.md). What it costs: a worker locks
 * up to `concurrency + 1` jobs more than it runs (the queue fetches again once its last job is
 * handed out, even with every task busy), and a worker killed within a batch's 10 ms leaves
 * completed jobs locked, which run again once its locks are released (src/db/worker-liveness.ts);
 * every job is idempotent.
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
 * The delivery runner's options (DELIVERY_TASKS; bench/fanout.ts measures the same): jobs fetched
 * `4 × concurrency` at a time. A fan-out job holds its slot for a few milliseconds, so a queue of
 * `concurrency + 1` runs out within a few jobs per slot and the slots then wait on the next fetch.
 * Measured with one webhook per event at concurrency 16, 64 against 17: a quarter as many fetches,
 * a slot holds a job 32-33 ms against 41-43 (BENCHMARKS.md). Completions are written 30 ms at a
 * time, not 10: 15-16 jobs per statement instead of 7.5-8, and graphile-worker's connections cost
 * 109-118 µs of PostgreSQL CPU per delivery against 165-200 (all of PostgreSQL 590-604 against
 * 649-705). The cost is the main runner's, over again: up to `4 × concurrency` jobs locked but not
 * yet running, and a worker killed within a batch's 30 ms leaves those completed jobs locked (both
 * released with the rest of a dead worker's locks; a rerun of a recorded attempt sends nothing).
 */
export function deliveryRunOptions(
  concurrency: number,
  b: BatchingOptions = {},
): ReturnType<typeof graphileRunOptions> {
  return graphileRunOptions(concurrency, { localQueueSize: 4 * concurrency, completeJobBatchDelay: 30, ...b });
}

/**
 * Starts graphile-worker with the project's task list and crontab, and beside it two runners of
 * their own: the delivery runner (DELIVERY_TASKS, deliveryRunOptions) and the fleet runner (the
 * tasks of FLEET_TASKS, one job at a time and fetched one at a time, no local queue, so a process
 * never holds a second partition of a full recompute that an idle process could run). Long jobs
 * stay on runners with short local queues, so few wait behind a busy process's tasks. Returned as
 * one runner: stopping it stops all three.
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
  const started: Runner[] = [runner];
  // No schedules on the other two (the first runner has the crontab): an empty list, or graphile
  // looks for ./crontab and logs "cron is disabled", which reads as if the service's schedules were off.
  try {
    started.push(
      await runWithLiveness(deps, {
        connectionString,
        ...deliveryRunOptions(deps.config.workerConcurrency),
        taskList: buildDeliveryTaskList(deps),
        parsedCronItems: [],
        noHandleSignals: true,
        logger: workerLogger(deps.log),
      }),
    );
    started.push(
      await runWithLiveness(deps, {
        connectionString,
        ...graphileRunOptions(1, { localQueueSize: -1 }),
        taskList: buildFleetTaskList(deps),
        parsedCronItems: [],
        noHandleSignals: true,
        logger: workerLogger(deps.log),
      }),
    );
  } catch (e) {
    await Promise.all(started.map((r) => r.stop()));
    throw e;
  }
  const all = Promise.all(started.map((r) => r.promise)).then(() => undefined);
  // The scoring thread pool ends with the runners (graceful shutdown stops them).
  const endPool = () => deps.scoringPool.destroy();
  void all.then(endPool, endPool);
  return {
    ...runner,
    promise: all,
    stop: async (reason?: string) => {
      await Promise.all(started.map((r) => r.stop(reason)));
    },
    kill: async (reason?: string) => {
      await Promise.all(started.map((r) => r.kill(reason)));
    },
  };
}
