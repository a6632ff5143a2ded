import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { ensureInteractionPartitions } from '../src/content/interaction-partitions';

/** Crontab, daily: the monthly partitions of interactions for this month and the next ones. */
export function interactionsPartitions(deps: Deps): Task<'interactions_partitions'> {
  return async (_payload, helpers) => {
    const created = await ensureInteractionPartitions(deps.db, deps.now());
    helpers.logger.info(`interactions_partitions: ${created.length ? created.join(', ') : 'none'} created`);
  };
}
