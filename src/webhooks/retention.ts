import type { Knex } from 'knex';
import { DELIVERY_RETENTION_MS } from './policy';

/**
 * Daily retention: finished deliveries older than the retention window go (attempts cascade),
 * then events left without deliveries. Pending deliveries are never touched. Notifications are
 * never pruned: their rows are what makes each one happen exactly once.
 */
export async function pruneDeliveries(db: Knex, now: Date): Promise<{ deliveries: number; events: number }> {
  const cutoff = new Date(now.getTime() - DELIVERY_RETENTION_MS);
  const deliveries = await db('webhook_deliveries')
    .whereIn('status', ['succeeded', 'failed'])
    .where('updated_at', '<', cutoff)
    .del();
  const events = await db('webhook_events')
    .where('created_at', '<', cutoff)
    .whereNotExists(db('webhook_deliveries as d').whereRaw('d.event_id = webhook_events.id').select(db.raw('1')))
    .del();
  return { deliveries: Number(deliveries), events: Number(events) };
}
