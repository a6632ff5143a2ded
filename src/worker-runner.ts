import path from 'path';
import { run, Runner } from 'graphile-worker';
import type { Deps } from './deps';
import { buildTaskList } from '../jobs';
import { repoRoot } from './db/paths';
import { configureScoringPool, destroyScoringPool } from './scoring/pool';

/** Starts graphile-worker with the project's task list and crontab. */
export async function startWorker(deps: Deps, connectionString: string): Promise<Runner> {
  configureScoringPool(deps.config.scoringPoolSize);
  const runner = await run({
    connectionString,
    concurrency: deps.config.workerConcurrency,
    taskList: buildTaskList(deps),
    crontabFile: path.join(repoRoot, 'jobs', 'crontab'),
    noHandleSignals: true,
    pollInterval: 1000,
  });
  // The scoring thread pool ends with the runner (graceful shutdown stops the runner).
  void runner.promise.then(destroyScoringPool, destroyScoringPool);
  return runner;
}

