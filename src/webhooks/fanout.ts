import type { Knex } from 'knex';
import type { Deps } from '../deps';
import type { AttemptResult } from './outbound-http';
import { AttemptTarget, DELIVER_JOB_MAX_ATTEMPTS, DeliverOptions, sendAttempt } from './delivery';
import type { JobName } from '../db/jobs';
import { retryDelayAfter } from './policy';

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

/** A delivery waiting for its first attempt, with what the attempt needs. */
export interface FirstAttempt extends AttemptTarget {
  deliveryId: string;
}

/** What the fan-out of one event did: its deliveries waiting for a first attempt, and their outcomes. */
export type FirstOutcome = 'succeeded' | 'retrying' | 'skipped';

/**
 * Stores the event and creates one delivery per enabled webhook of the agent subscribed to the
 * type, in one statement, and answers every delivery of the event still waiting for its first
 * attempt (the new ones, and on a rerun after a crash those created but never recorded as
 * attempted). Deliveries are unique per (event, webhook), so a rerun creates nothing twice. A
 * waiting delivery whose webhook was disabled meanwhile ends as failed. Events nobody subscribed
 * to are not stored.
 */
export async function createDeliveries(db: Knex, e: EventPayload): Promise<FirstAttempt[]> {
  const payload = { type: e.type, timestamp: e.occurredAt, data: { agentId: e.agentId, ...e.data } };
  const r = await db.raw(
    `with hooks as (
       select id, url, secret_enc, previous_secret_enc, previous_secret_until from webhooks
       where agent_id = :agent and enabled and :type = any(events)
     ),
     ev as (
       insert into webhook_events (id, type, agent_id, payload, occurred_at)
       select :id, :type, :agent, :payload::jsonb, :at from (select 1 from hooks limit 1) h
       on conflict (id) do nothing
     ),
     created as (
       insert into webhook_deliveries (event_id, webhook_id, next_attempt_at)
       select :id, h.id, now() from hooks h
       on conflict (event_id, webhook_id) do nothing
       returning id, webhook_id
     ),
     -- (data-modifying CTEs run whether or not the query reads them)
     orphaned as (
       update webhook_deliveries d set status = 'failed', last_error = 'webhook disabled', next_attempt_at = null, updated_at = now()
       from webhooks w
       where d.event_id = :id and d.status = 'pending' and d.step = 0 and w.id = d.webhook_id and not w.enabled
       returning d.id
     ),
     waiting as (
       select id, webhook_id from created
       union all
       select d.id, d.webhook_id from webhook_deliveries d
       where d.event_id = :id and d.status = 'pending' and d.step = 0 and d.webhook_id in (select id from hooks)
     )
     select w.id delivery_id, h.id webhook_id, h.url, h.secret_enc, h.previous_secret_enc, h.previous_secret_until,
            :payload::jsonb payload
     from waiting w join hooks h on h.id = w.webhook_id`,
    { id: e.eventId, type: e.type, agent: e.agentId, payload: JSON.stringify(payload), at: e.occurredAt },
  );
  return (r.rows as any[]).map((row) => ({
    deliveryId: row.delivery_id,
    eventId: e.eventId,
    webhookId: row.webhook_id,
    url: row.url,
    secretEnc: row.secret_enc,
    previousSecretEnc: row.previous_secret_enc,
    previousSecretUntil: row.previous_secret_until,
    payload: row.payload,
  }));
}

/**
 * Records the first attempts of deliveries in one statement: each attempt row (token `step:1`),
 * the delivery's state, the job of the second attempt for a failure (its own runAt, the retry
 * schedule), and the webhook's success (only when that changes it, to the minute, so a busy
 * webhook's row is not rewritten by every delivery). A delivery already past its first attempt
 * is skipped, so a rerun records nothing twice. Outcomes in the order of `attempts`.
 */
export async function recordFirstAttempts(
  deps: Deps,
  attempts: { deliveryId: string; result: AttemptResult }[],
): Promise<FirstOutcome[]> {
  if (attempts.length === 0) return [];
  const now = deps.now();
  const delay = retryDelayAfter(1)!;
  const nextAt = new Date(now.getTime() + delay);
  const r = await deps.db.raw(
    `with r as (
       select * from unnest(:ids::uuid[], :ok::bool[], :code::int[], :latency::int[], :error::text[])
         as r(id, ok, code, latency, error)
     ),
     upd as (
       update webhook_deliveries d
       set status = case when r.ok then 'succeeded' else 'pending' end, step = 1, attempts = d.attempts + 1,
           response_code = r.code, latency_ms = r.latency, last_error = r.error,
           next_attempt_at = case when r.ok then null else :next::timestamptz end, updated_at = :now
       from r where d.id = r.id and d.status = 'pending' and d.step < 1
       returning d.id, d.webhook_id, d.attempts, r.ok, r.code, r.latency, r.error
     ),
     att as (
       insert into webhook_delivery_attempts (delivery_id, token, attempt, ok, response_code, latency_ms, error, created_at)
       select id, 'step:1', attempts, ok, code, latency, error, :now from upd
       on conflict (delivery_id, token) do nothing
       returning delivery_id
     ),
     jobs as (
       select graphile_worker.add_job(:task, json_build_object('deliveryId', id, 'step', 2),
                run_at => :next::timestamptz, max_attempts => :maxAttempts::int) j
       from upd where not ok
     ),
     hooks as (
       update webhooks w set consecutive_failures = 0, last_success_at = :now
       where w.id in (select webhook_id from upd where ok)
         and (w.consecutive_failures <> 0 or w.last_success_at is null
              or w.last_success_at < :now::timestamptz - interval '1 minute' or w.last_success_at > :now)
       returning w.id
     )
     select array(select id from upd) ids, (select count(*) from att) att, (select count(*) from jobs) jobs,
            (select count(*) from hooks) hooks`,
    {
      ids: attempts.map((a) => a.deliveryId),
      ok: attempts.map((a) => a.result.ok),
      code: attempts.map((a) => a.result.responseCode),
      latency: attempts.map((a) => a.result.latencyMs),
      error: attempts.map((a) => a.result.error?.slice(0, 500) ?? null),
      next: nextAt,
      now,
      task: 'webhook_deliver' satisfies JobName,
      maxAttempts: DELIVER_JOB_MAX_ATTEMPTS,
    },
  );
  const recorded = new Set<string>(r.rows[0].ids);
  return attempts.map((a) => (!recorded.has(a.deliveryId) ? 'skipped' : a.result.ok ? 'succeeded' : 'retrying'));
}

/**
 * The fan-out of one event: its deliveries (createDeliveries), their first attempts sent at once,
 * and the attempts recorded together (recordFirstAttempts). A crash between sending and recording
 * leaves the deliveries waiting for their first attempt, and the rerun of the fan-out job sends
 * them again (at-least-once). Later attempts are `webhook_deliver` jobs (src/webhooks/delivery.ts).
 * Never throws for HTTP failures; database errors throw and let graphile retry the job.
 */
export async function fanoutEvent(deps: Deps, e: EventPayload, opts: DeliverOptions = {}): Promise<FirstOutcome[]> {
  const targets = await createDeliveries(deps.db, e);
  if (targets.length === 0) return [];
  const results = await Promise.all(targets.map((t) => sendAttempt(deps, t, opts)));
  return recordFirstAttempts(
    deps,
    targets.map((t, i) => ({ deliveryId: t.deliveryId, result: results[i] })),
  );
}
