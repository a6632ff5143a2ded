import type { TaskList } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { emailOutboxSend } from './email_outbox_send';

/**
 * Every graphile-worker task, by identifier. Each job file exports a factory taking the
 * process's deps; tasks call services, never HTTP, and are idempotent.
 */
export function buildTaskList(deps: Deps): TaskList {
  return {
    email_outbox_send: emailOutboxSend(deps),
  };
}
