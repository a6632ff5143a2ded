import type { EventPayload } from '../src/webhooks/fanout';
import type { DeliverJob } from '../src/webhooks/delivery';
import type { PartitionJob } from '../src/scoring/fleet';

/**
 * The one declaration of every job: identifier → payload, merged into graphile-worker's own
 * `GraphileWorker.Tasks` map. `addJob` and `addJobCall` (src/db/jobs.ts), the task list
 * (jobs/index.ts, one task per identifier, each typed by its payload) and the crontab's test
 * check their identifiers and payloads against it; a job name nowhere else is a free string.
 * Payloads come back from the database as JSON: tasks still check them before use.
 */
declare global {
  // graphile-worker's declaration-merging point (its interfaces.ts); a namespace is the only way to extend it.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace GraphileWorker {
    interface Tasks {
      /** emitEvent: store the event, create its deliveries and make their first attempts. */
      event_fanout: EventPayload;
      /** A later attempt of one delivery (retry chain) or an owner's redelivery. */
      webhook_deliver: DeliverJob;
      /** Crontab, daily: finished deliveries past retention. */
      webhook_prune: Record<string, never>;
      /** One email_outbox row. */
      email_outbox_send: { id: string };
      /** Debounced after writes (the scoring touch). */
      scoring_incremental: Record<string, never>;
      /** Crontab: the periodic (change-proportional) run; on demand: `full` recompute, or one agent's. */
      reputation_recompute: { agentId?: string; full?: boolean };
      /** One partition of a full recompute spread over the workers (run by each worker one at a time). */
      scoring_partition: PartitionJob;
      /** Crontab or on demand: live snapshots of the current week (or `week`, YYYY-Www). */
      leaderboards_refresh: { week?: string };
      /** Crontab (Monday) or on demand: ended weeks become final (or `week`). */
      leaderboards_freeze: { week?: string };
      /** Crontab, hourly: Idempotency-Key records past their window. */
      idempotency_prune: Record<string, never>;
      /** Crontab, daily: inbox items past retention. */
      inbox_prune: Record<string, never>;
      /** Crontab, daily: the monthly partitions of interactions, created ahead. */
      interactions_partitions: Record<string, never>;
    }
  }
}

export {};
