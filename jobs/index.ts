import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import type { JobName } from '../src/db/jobs';
import './tasks';
import { eventFanout } from './event_fanout';
import { webhookDeliver } from './webhook_deliver';
import { webhookPrune } from './webhook_prune';
import { emailOutboxSend } from './email_outbox_send';
import { scoringIncremental } from './scoring_incremental';
import { reputationRecompute } from './reputation_recompute';
import { leaderboardsRefresh } from './leaderboards_refresh';
import { leaderboardsFreeze } from './leaderboards_freeze';
import { idempotencyPrune } from './idempotency_prune';
import { inboxPrune } from './inbox_prune';
import { scoringPartition } from './scoring_partition';
import { interactionsPartitions } from './interactions_partitions';

/**
 * Tasks each worker process runs one job at a time, on a runner of their own (src/worker-runner.ts):
 * a full recompute's partitions, so that each process takes one and an idle one takes the next.
 */
export const FLEET_TASKS = ['scoring_partition'] as const satisfies readonly JobName[];
type FleetTask = (typeof FLEET_TASKS)[number];

/**
 * Short, numerous jobs each worker process runs on a runner of their own, which fetches many at a
 * time: the webhook fan-out and its retries. Long jobs stay off it, so none waits in a busy
 * process's local queue while another process is idle.
 */
export const DELIVERY_TASKS = ['event_fanout', 'webhook_deliver'] as const satisfies readonly JobName[];
type DeliveryTask = (typeof DELIVERY_TASKS)[number];

/** One task per identifier of the job map (jobs/tasks.ts) but the fleet's and delivery's, typed by its payload. */
export type TaskMap = { [K in Exclude<JobName, FleetTask | DeliveryTask>]: Task<K> };

/**
 * The main runner's graphile-worker tasks (every task but the fleet's and delivery's), by
 * identifier. Each job file exports a factory taking the process's deps; tasks call services,
 * never HTTP, and are idempotent.
 */
export function buildTaskList(deps: Deps): TaskMap {
  return {
    webhook_prune: webhookPrune(deps),
    email_outbox_send: emailOutboxSend(deps),
    scoring_incremental: scoringIncremental(deps),
    reputation_recompute: reputationRecompute(deps),
    leaderboards_refresh: leaderboardsRefresh(deps),
    leaderboards_freeze: leaderboardsFreeze(deps),
    idempotency_prune: idempotencyPrune(deps),
    inbox_prune: inboxPrune(deps),
    interactions_partitions: interactionsPartitions(deps),
  };
}

/** The delivery runner's tasks (DELIVERY_TASKS). */
export function buildDeliveryTaskList(deps: Deps): { [K in DeliveryTask]: Task<K> } {
  return { event_fanout: eventFanout(deps), webhook_deliver: webhookDeliver(deps) };
}

/** The fleet runner's tasks (FLEET_TASKS). */
export function buildFleetTaskList(deps: Deps): { [K in FleetTask]: Task<K> } {
  return { scoring_partition: scoringPartition(deps) };
}
