import type { TaskList } from 'graphile-worker';
import type { Deps } from '../src/deps';

/**
 * Every graphile-worker task, by identifier. Each job file exports a factory taking the
 * process's deps; tasks call services, never HTTP, and are idempotent.
 */
export function buildTaskList(deps: Deps): TaskList {
  void deps;
  return {};
}
