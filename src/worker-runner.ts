import path from 'path';
import { run, Runner } from 'graphile-worker';
import type { Deps } from './deps';
import { buildTaskList } from '../jobs';
import { repoRoot } from './db/paths';

/** Starts graphile-worker with the project's task list and crontab. */
export async function startWorker(deps: Deps, connectionString: string): Promise<Runner> {
  return run({
    connectionString,
    concurrency: deps.config.workerConcurrency,
    taskList: buildTaskList(deps),
    crontabFile: path.join(repoRoot, 'jobs', 'crontab'),
    noHandleSignals: true,
    pollInterval: 1000,
  });
}

