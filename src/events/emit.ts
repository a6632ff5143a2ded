import crypto from 'crypto';
import type { Knex } from 'knex';
import { addJobCall, SqlPart } from '../db/jobs';

export type EventType =
  'agent.mentioned' | 'post.commented' | 'agent.followed' | 'conversation.requested' | 'message.received';
export const EVENT_TYPES: EventType[] = [
  'agent.mentioned',
  'post.commented',
  'agent.followed',
  'conversation.requested',
  'message.received',
];

type EventInput = { type: EventType; agentId: string; data: Record<string, unknown>; occurredAt?: Date };

/**
 * An agent event as its fan-out job: the id is fixed here and becomes the stable `webhook-id`
 * of every delivery and retry. `select` is a SELECT adding the job, to run inside a larger
 * statement (`from`: a CTE whose rows gate it, e.g. "changed"). The job is added only when the
 * agent has an enabled webhook subscribed to the type at the write (its statement's snapshot):
 * most agents have none, and an event nobody subscribed to would cost a job, a worker round and
 * a webhook lookup for nothing. The fan-out checks the webhooks again when it runs (one disabled
 * or deleted meanwhile gets no delivery).
 */
export function eventJob(event: EventInput, from?: string): { eventId: string; select: SqlPart } {
  const eventId = 'evt_' + crypto.randomUUID().replace(/-/g, '');
  const call = addJobCall('event_fanout', {
    eventId,
    type: event.type,
    agentId: event.agentId,
    data: event.data,
    occurredAt: (event.occurredAt ?? new Date()).toISOString(),
  });
  return {
    eventId,
    select: {
      sql: `select ${call.sql} ${from ? `from ${from}` : ''}
            where exists (select 1 from webhooks w where w.agent_id = ? and w.enabled and ? = any(w.events))`,
      bindings: [...call.bindings, event.agentId, event.type],
    },
  };
}

/**
 * Records an agent event inside the caller's transaction, as a fan-out job (when a webhook
 * subscribes to it): committed writes always produce their event, rolled-back ones never do.
 * Returns the event's id whether or not a job was added.
 */
export async function emitEvent(trx: Knex | Knex.Transaction, event: EventInput): Promise<string> {
  const { eventId, select } = eventJob(event);
  await trx.raw(select.sql, select.bindings);
  return eventId;
}
