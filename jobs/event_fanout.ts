import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { fanoutEvent, isEventPayload } from '../src/webhooks/fanout';

/**
 * Payload `{eventId, type, agentId, data, occurredAt}` from emitEvent(): stores the event and
 * queues one `webhook_deliver` job per enabled matching webhook. Idempotent on rerun.
 */
export function eventFanout(deps: Deps): Task {
  return async (payload) => {
    if (!isEventPayload(payload))
      throw new Error('event_fanout: payload needs eventId, type, agentId, data, occurredAt');
    await fanoutEvent(deps.db, payload);
  };
}
