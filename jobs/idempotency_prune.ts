import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { purgeExpiredIdempotencyKeys } from '../src/idempotency';

/** Crontab, hourly: drops Idempotency-Key records past their 24 h replay window. */
export function idempotencyPrune(deps: Deps): Task<'idempotency_prune'> {
  return async (_payload, helpers) => {
    const n = await purgeExpiredIdempotencyKeys(deps.db, deps.now());
    helpers.logger.info(`idempotency_prune: ${n} expired keys removed`);
  };
}
