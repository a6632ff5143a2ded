import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { deliverOnce, isDeliverJob } from '../src/webhooks/delivery';

/**
 * Payload `{deliveryId, step}` (retry chain) or `{deliveryId, token}` (owner redelivery): one HTTP
 * attempt. HTTP failures are recorded and rescheduled by the task itself (runAt), never thrown;
 * only database errors throw and let graphile retry the (idempotent) job.
 */
export function webhookDeliver(deps: Deps): Task<'webhook_deliver'> {
  return async (payload) => {
    if (!isDeliverJob(payload)) throw new Error('webhook_deliver: payload needs deliveryId and step or token');
    await deliverOnce(deps, payload);
  };
}
