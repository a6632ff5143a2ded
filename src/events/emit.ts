import crypto from 'crypto';
import type { Knex } from 'knex';
import { addJobCall } from '../db/jobs';
import { inboxTypeOfEvent } from '../inbox/types';
import { CteWrites, InboxItemInput, inboxWrites, joinWrites, runWrites } from '../inbox/write';

export type EventType =
  | 'agent.mentioned'
  | 'post.commented'
  | 'agent.replied'
  | 'agent.followed'
  | 'conversation.requested'
  | 'message.received';
export const EVENT_TYPES: EventType[] = [
  'agent.mentioned',
  'post.commented',
  'agent.replied',
  'agent.followed',
  'conversation.requested',
  'message.received',
];

export type EventInput = { type: EventType; agentId: string; data: Record<string, unknown>; occurredAt?: Date };

/**
 * Everything agent events write, as CTEs of the write's own statement (`name` prefixes them,
 * unique within the statement; each event's `from`: a CTE whose rows gate it, e.g. "changed",
 * empty when the write changed nothing):
 * - per event, the fan-out job, whose event id is fixed here and becomes the stable `webhook-id`
 *   of every delivery and retry. It is added only when the agent has an enabled webhook subscribed
 *   to the type at the write (its statement's snapshot): most agents have none, and an event nobody
 *   subscribed to would cost a job, a worker round and a webhook lookup for nothing. The fan-out
 *   checks the webhooks again when it runs (one disabled or deleted meanwhile gets no delivery).
 * - per event, the agent's inbox item (src/inbox/write.ts), webhook or not, unique on the event id.
 *   Its actor, post and comment come from the event's `byAgentId`, `postId` and `commentId`.
 * This is the only way events are written, so no event goes without its inbox item.
 */
export function eventsWrites(
  name: string,
  events: { event: EventInput; from?: string }[],
): { eventIds: string[] } & CteWrites {
  const eventIds: string[] = [];
  const jobs: CteWrites[] = [];
  const items: { item: InboxItemInput; from?: string }[] = [];
  events.forEach(({ event, from }, n) => {
    const eventId = 'evt_' + crypto.randomUUID().replace(/-/g, '');
    eventIds.push(eventId);
    const occurredAt = event.occurredAt ?? new Date();
    const call = addJobCall('event_fanout', {
      eventId,
      type: event.type,
      agentId: event.agentId,
      data: event.data,
      occurredAt: occurredAt.toISOString(),
    });
    jobs.push({
      sql: `${name}_j${n} as (select ${call.sql} ${from ? `from ${from}` : ''}
              where exists (select 1 from webhooks w where w.agent_id = ? and w.enabled and ? = any(w.events)))`,
      bindings: [...call.bindings, event.agentId, event.type],
      count: `(select count(*) from ${name}_j${n})`,
    });
    const type = inboxTypeOfEvent(event.type);
    const d = event.data as { byAgentId?: string; postId?: string; commentId?: string | null };
    if (type)
      items.push({
        item: {
          agentId: event.agentId,
          type,
          actorId: d.byAgentId ?? null,
          postId: d.postId ?? null,
          commentId: d.commentId ?? null,
          eventId,
          data: event.data,
          at: occurredAt,
        },
        from,
      });
  });
  return { eventIds, ...joinWrites([...jobs, inboxWrites(`${name}_inbox`, items)]) };
}

/** One event as CTEs (see eventsWrites). */
export function eventWrites(event: EventInput, name: string, from?: string): { eventId: string } & CteWrites {
  const w = eventsWrites(name, [{ event, from }]);
  return { eventId: w.eventIds[0], sql: w.sql, bindings: w.bindings, count: w.count };
}

/**
 * Records an agent event inside the caller's transaction, as a statement of its own: its inbox
 * item and (when a webhook subscribes to it) its fan-out job. Committed writes always produce
 * their event, rolled-back ones never do. Returns the event's id whether or not a job was added.
 */
export async function emitEvent(trx: Knex | Knex.Transaction, event: EventInput): Promise<string> {
  const w = eventWrites(event, 'ev');
  await runWrites(trx, w);
  return w.eventId;
}
