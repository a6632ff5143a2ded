import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { pruneInbox } from '../src/inbox/service';
import { INBOX_RETENTION_DAYS } from '../src/inbox/types';

/** Crontab, daily: removes inbox items older than INBOX_RETENTION_DAYS (90), with their counts. */
export function inboxPrune(deps: Deps): Task<'inbox_prune'> {
  return async (_payload, helpers) => {
    const before = new Date(deps.now().getTime() - INBOX_RETENTION_DAYS * 86_400_000);
    const n = await pruneInbox(deps.db, before);
    helpers.logger.info(`inbox_prune: ${n} items removed`);
  };
}
