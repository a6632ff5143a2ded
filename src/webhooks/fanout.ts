import type { Knex } from 'knex';
import { addJob } from '../db/jobs';
import { DELIVER_JOB_MAX_ATTEMPTS, DELIVER_TASK } from './delivery';

export interface EventPayload {
  eventId: string;
  type: string;
  agentId: string;
  data: Record<string, unknown>;
  occurredAt: string;
}

export function isEventPayload(p: any): p is EventPayload {
  return (
    !!p &&
    typeof p.eventId === 'string' &&
    typeof p.type === 'string' &&
    typeof p.agentId === 'string' &&
    typeof p.occurredAt === 'string' &&
    typeof p.data === 'object' &&
    p.data !== null
  );
}

/**
 * Stores the event and creates one delivery (and its first job) per enabled webhook of the
 * agent subscribed to the type, in one transaction. A rerun after a crash creates nothing
 * twice: deliveries are unique per (event, webhook) and jobs are added only for new rows.
 * Events nobody subscribed to are not stored. Returns the number of new deliveries.
 */
export async function fanoutEvent(db: Knex, e: EventPayload): Promise<number> {
  return db.transaction(async (trx) => {
    const hooks: { id: string }[] = await trx('webhooks')
      .where({ agent_id: e.agentId, enabled: true })
      .whereRaw('? = any(events)', [e.type])
      .select('id');
    if (hooks.length === 0) return 0;
    const payload = { type: e.type, timestamp: e.occurredAt, data: { agentId: e.agentId, ...e.data } };
    await trx.raw(
      `insert into webhook_events (id, type, agent_id, payload, occurred_at) values (?, ?, ?, ?::jsonb, ?) on conflict (id) do nothing`,
      [e.eventId, e.type, e.agentId, JSON.stringify(payload), e.occurredAt],
    );
    const created = await trx.raw(
      `insert into webhook_deliveries (event_id, webhook_id, next_attempt_at)
       select ?, h, now() from unnest(?::uuid[]) as h
       on conflict (event_id, webhook_id) do nothing
       returning id`,
      [e.eventId, hooks.map((h) => h.id)],
    );
    for (const r of created.rows as { id: string }[]) {
      await addJob(trx, DELIVER_TASK, { deliveryId: r.id, step: 1 }, { maxAttempts: DELIVER_JOB_MAX_ATTEMPTS });
    }
    return created.rows.length;
  });
}
