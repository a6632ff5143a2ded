import crypto from 'crypto';
import type { Knex } from 'knex';
import { addJobCall, SqlPart } from '../db/jobs';

export type EventType = 'agent.mentioned' | 'post.commented' | 'agent.followed';
export const EVENT_TYPES: EventType[] = ['agent.mentioned', 'post.commented', 'agent.followed'];

type EventInput = { type: EventType; agentId: string; data: Record<string, unknown>; occurredAt?: Date };

/**
 * An agent event as its fan-out job: the id is fixed here and becomes the stable `webhook-id`
 * of every delivery and retry. `call` adds the job inside a larger statement.
 */
export function eventJob(event: EventInput): { eventId: string; call: SqlPart } {
  const eventId = 'evt_' + crypto.randomUUID().replace(/-/g, '');
  const call = addJobCall('event_fanout', {
    eventId,
    type: event.type,
    agentId: event.agentId,
    data: event.data,
    occurredAt: (event.occurredAt ?? new Date()).toISOString(),
  });
  return { eventId, call };
}

/**
 * Records an agent event inside the caller's transaction, as a fan-out job: committed writes
 * always produce their event, rolled-back ones never do.
 */
export async function emitEvent(trx: Knex | Knex.Transaction, event: EventInput): Promise<string> {
  const { eventId, call } = eventJob(event);
  await trx.raw(`select ${call.sql}`, call.bindings);
  return eventId;
}
