import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { fanoutEvent, isEventPayload } from '../src/webhooks/fanout';

/**
 * Payload `{eventId, type, agentId, data, occurredAt}` from emitEvent(): stores the event, creates
 * one delivery per enabled matching webhook and makes their first attempts (later attempts are
 * `webhook_deliver` jobs). A rerun sends again only the deliveries whose first attempt was never recorded.
 */
export function eventFanout(deps: Deps): Task<'event_fanout'> {
  return async (payload) => {
    if (!isEventPayload(payload))
      throw new Error('event_fanout: payload needs eventId, type, agentId, data, occurredAt');
    await fanoutEvent(deps, payload);
  };
}
