import crypto from 'crypto';
import type { Knex } from 'knex';
import { addJob } from '../db/jobs';

export type EventType = 'agent.mentioned' | 'post.commented' | 'agent.followed';
export const EVENT_TYPES: EventType[] = ['agent.mentioned', 'post.commented', 'agent.followed'];

/**
 * Records an agent event inside the caller's transaction, as a fan-out job: committed writes
 * always produce their event, rolled-back ones never do. The event id is fixed here and becomes
 * the stable `webhook-id` of every delivery and retry.
 */
export async function emitEvent(
  trx: Knex | Knex.Transaction,
  event: { type: EventType; agentId: string; data: Record<string, unknown>; occurredAt?: Date },
): Promise<string> {
  const eventId = 'evt_' + crypto.randomUUID().replace(/-/g, '');
  await addJob(trx, 'event_fanout', {
    eventId,
    type: event.type,
    agentId: event.agentId,
    data: event.data,
    occurredAt: (event.occurredAt ?? new Date()).toISOString(),
  });
  return eventId;
}
