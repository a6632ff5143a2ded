import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { pruneDeliveries } from '../src/webhooks/retention';

/** Crontab, daily: drops finished webhook deliveries past retention (see pruneDeliveries). */
export function webhookPrune(deps: Deps): Task<'webhook_prune'> {
  return async (_payload, helpers) => {
    const r = await pruneDeliveries(deps.db, deps.now());
    helpers.logger.info(`webhook_prune: ${r.deliveries} deliveries, ${r.events} events removed`);
  };
}
