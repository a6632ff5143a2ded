import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { addJob, JobName } from '../db/jobs';
import { statement } from '../db/query';
import { notifyOnce } from '../notifications/service';
import { webhookHeaders, webhookSecret } from './signing';
import { Resolver } from './ssrf';
import { AttemptResult, postWebhook } from './outbound-http';
import { retryDelayAfter, shouldDisable } from './policy';

/** The worker side of a delivery: one signed attempt, its record, the retry schedule, disabling. */

/** graphile retries of a delivery job are for database errors only; HTTP failures never throw. */
export const DELIVER_JOB_MAX_ATTEMPTS = 10;

export interface DeliverJob {
  deliveryId: string;
  /** Retry-chain attempt (1..8). */
  step?: number;
  /** Owner-requested replay, 'redeliver:<uuid>'. */
  token?: string;
}

export function isDeliverJob(x: unknown): x is DeliverJob {
  const p = x as Record<keyof DeliverJob, unknown> | null;
  return (
    !!p &&
    typeof p.deliveryId === 'string' &&
    /^[0-9a-f-]{36}$/i.test(p.deliveryId) &&
    ((typeof p.step === 'number' && Number.isInteger(p.step) && p.step >= 1) ||
      (typeof p.token === 'string' && p.token.startsWith('redeliver:')))
  );
}

export interface DeliverOptions {
  timeoutMs?: number;
  resolve?: Resolver;
}

export type DeliverOutcome = 'succeeded' | 'retrying' | 'failed' | 'redelivered' | 'skipped' | 'webhook_disabled';

const DELIVERY_TO_ATTEMPT = statement<{
  status: string;
  step: number;
  event_id: string;
  webhook_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_until: Date | null;
  enabled: boolean;
  payload: unknown;
  done: boolean;
}>(
  'webhooks_delivery_to_attempt',
  `select d.status, d.step, d.event_id, w.id webhook_id, w.url, w.secret_enc, w.previous_secret_enc,
          w.previous_secret_until, w.enabled, e.payload,
          exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id and a.token = ?::text) done
   from webhook_deliveries d join webhooks w on w.id = d.webhook_id join webhook_events e on e.id = d.event_id
   where d.id = ?::uuid`,
);

/**
 * One attempt of one delivery. Idempotent: an attempt already recorded under its token (or a
 * delivery past this step) is skipped, so a rerun after a crash between the HTTP call and the
 * record repeats only the HTTP call (at-least-once). Never throws for HTTP failures: it records
 * them and schedules the next attempt with its own runAt (not graphile's backoff).
 */
export async function deliverOnce(deps: Deps, job: DeliverJob, opts: DeliverOptions = {}): Promise<DeliverOutcome> {
  const { db } = deps;
  const chain = job.step !== undefined;
  const token = chain ? `step:${job.step}` : job.token!;
  const row = (await deps.query(DELIVERY_TO_ATTEMPT, [token, job.deliveryId])).rows[0];
  if (!row || row.done) return 'skipped';
  if (chain && (row.status !== 'pending' || row.step >= job.step!)) return 'skipped';
  if (!row.enabled) {
    if (chain) {
      await db('webhook_deliveries')
        .where({ id: job.deliveryId, status: 'pending' })
        .update({ status: 'failed', last_error: 'webhook disabled', next_attempt_at: null, updated_at: deps.now() });
    }
    return 'webhook_disabled';
  }

  const result = await sendAttempt(
    deps,
    {
      eventId: row.event_id,
      webhookId: row.webhook_id,
      url: row.url,
      secretEnc: row.secret_enc,
      previousSecretEnc: row.previous_secret_enc,
      previousSecretUntil: row.previous_secret_until,
      payload: row.payload,
    },
    opts,
  );
  const chainEnds = chain && !result.ok && retryDelayAfter(job.step!) === null;
  return chainEnds
    ? recordAttempt(deps, job, token, row.webhook_id, result)
    : recordAttemptAtOnce(deps, job, token, result);
}

const RECORD_ATTEMPT = statement<{ id: string }>(
  'webhooks_record_attempt',
  `with p as (select ?::uuid id, ?::text token, ?::int step, ?::bool ok, ?::int code, ?::int latency, ?::text error,
                     ?::timestamptz now, ?::timestamptz next, ?::text task, ?::int max_attempts),
   d as (
     update webhook_deliveries d
     set attempts = d.attempts + 1,
         status = case when p.ok then 'succeeded' when p.step is not null then 'pending' else d.status end,
         step = coalesce(p.step, d.step),
         response_code = p.code, latency_ms = p.latency, last_error = p.error,
         next_attempt_at = case when p.ok then null when p.step is not null then p.next else d.next_attempt_at end,
         updated_at = p.now
     from p
     where d.id = p.id and (p.step is null or (d.status = 'pending' and d.step < p.step))
       and not exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id and a.token = p.token)
     returning d.id, d.webhook_id, d.attempts
   ),
   att as (
     insert into webhook_delivery_attempts (delivery_id, token, attempt, ok, response_code, latency_ms, error, created_at)
     select d.id, p.token, d.attempts, p.ok, p.code, p.latency, p.error, p.now from d, p
     on conflict (delivery_id, token) do nothing
     returning delivery_id
   ),
   job as (
     select graphile_worker.add_job(p.task, json_build_object('deliveryId', d.id, 'step', p.step + 1),
              run_at => p.next, max_attempts => p.max_attempts) j
     from d, p where not p.ok and p.step is not null
   ),
   hook as (
     update webhooks w set consecutive_failures = 0, last_success_at = p.now
     from d, p
     where p.ok and w.id = d.webhook_id
       and (w.consecutive_failures <> 0 or w.last_success_at is null
            or w.last_success_at < p.now - interval '1 minute' or w.last_success_at > p.now)
     returning w.id
   )
   select d.id, (select count(*) from att) att, (select count(*) from job) job, (select count(*) from hook) hook
   from d`,
);

/**
 * Records an attempt in one statement, every case but the last failure of a retry chain (which
 * counts against the webhook and may disable it: recordAttempt): the attempt row under its token,
 * the delivery's state (a success ends it; a chain failure moves its step and next attempt; a
 * failed redelivery leaves both), the next attempt's job at its own runAt, and on success the
 * webhook's state (only when that changes it, to the minute). The delivery's row is updated first,
 * so attempts on the same delivery (a retry and a redelivery) number themselves one after the
 * other. A delivery past this step, or an attempt already recorded under its token, is skipped.
 */
async function recordAttemptAtOnce(
  deps: Deps,
  job: DeliverJob,
  token: string,
  result: AttemptResult,
): Promise<DeliverOutcome> {
  const chain = job.step !== undefined;
  const now = deps.now();
  const delay = chain && !result.ok ? retryDelayAfter(job.step!) : null;
  const r = await deps.query(RECORD_ATTEMPT, [
    job.deliveryId,
    token,
    job.step ?? null,
    result.ok,
    result.responseCode,
    result.latencyMs,
    result.error?.slice(0, 500) ?? null,
    now,
    delay === null ? null : new Date(now.getTime() + delay),
    'webhook_deliver' satisfies JobName,
    DELIVER_JOB_MAX_ATTEMPTS,
  ]);
  if (r.rows.length === 0) return 'skipped';
  return !chain ? 'redelivered' : result.ok ? 'succeeded' : 'retrying';
}

/** What one attempt needs of its delivery, webhook and event. */
export interface AttemptTarget {
  eventId: string;
  webhookId: string;
  url: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretUntil: Date | null;
  /** The stored event payload (as jsonb gives it back, so every attempt sends the same bytes). */
  payload: unknown;
}

/** Signs (with the current secret, and the replaced one during a rotation's overlap) and POSTs once. */
export function sendAttempt(deps: Deps, t: AttemptTarget, opts: DeliverOptions = {}): Promise<AttemptResult> {
  const now = deps.now();
  const secrets = [webhookSecret(deps.config.sessionSecret, t.webhookId, t.secretEnc)];
  if (t.previousSecretEnc && t.previousSecretUntil && new Date(t.previousSecretUntil) > now) {
    // The replaced secret is a courtesy of the overlap: one sealed under a former SESSION_SECRET
    // (the rotation that followed a SESSION_SECRET change) is left out, not a failed delivery.
    try {
      secrets.push(webhookSecret(deps.config.sessionSecret, t.webhookId, t.previousSecretEnc));
    } catch {
      deps.log.warn(
        { webhookId: t.webhookId },
        'previous webhook secret unreadable (SESSION_SECRET changed); signing with the current one only',
      );
    }
  }
  const body = JSON.stringify(t.payload);
  return postWebhook({
    url: t.url,
    headers: webhookHeaders(secrets, t.eventId, now, body),
    body,
    guard: { allowPrivate: deps.config.webhookAllowPrivate },
    timeoutMs: opts.timeoutMs,
    resolve: opts.resolve,
  });
}

/**
 * Records an attempt in a transaction that locks the delivery: used for the last failure of a
 * retry chain, which fails the delivery and counts against the webhook (failedDelivery).
 */
async function recordAttempt(
  deps: Deps,
  job: DeliverJob,
  token: string,
  webhookId: string,
  result: AttemptResult,
): Promise<DeliverOutcome> {
  const chain = job.step !== undefined;
  return deps.db.transaction(async (trx) => {
    const now = deps.now();
    const d = await trx('webhook_deliveries').where({ id: job.deliveryId }).forUpdate().first();
    if (!d) return 'skipped';
    if (chain && (d.status !== 'pending' || d.step >= job.step!)) return 'skipped';
    const attempt = d.attempts + 1;
    const ins = await trx.raw(
      `insert into webhook_delivery_attempts (delivery_id, token, attempt, ok, response_code, latency_ms, error, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (delivery_id, token) do nothing returning id`,
      [
        d.id,
        token,
        attempt,
        result.ok,
        result.responseCode,
        result.latencyMs,
        result.error?.slice(0, 500) ?? null,
        now,
      ],
    );
    if (ins.rows.length === 0) return 'skipped';

    let status: string = d.status;
    let nextAt: Date | null = d.next_attempt_at;
    let step: number = d.step;
    let outcome: DeliverOutcome;
    if (result.ok) {
      status = 'succeeded';
      nextAt = null;
      outcome = chain ? 'succeeded' : 'redelivered';
      if (chain) step = job.step!;
    } else if (chain) {
      step = job.step!;
      const delay = retryDelayAfter(step);
      if (delay === null) {
        status = 'failed';
        nextAt = null;
        outcome = 'failed';
      } else {
        nextAt = new Date(now.getTime() + delay);
        await addJob(
          trx,
          'webhook_deliver',
          { deliveryId: d.id, step: step + 1 },
          { runAt: nextAt, maxAttempts: DELIVER_JOB_MAX_ATTEMPTS },
        );
        outcome = 'retrying';
      }
    } else outcome = 'redelivered';

    await trx('webhook_deliveries')
      .where({ id: d.id })
      .update({
        status,
        step,
        attempts: attempt,
        response_code: result.responseCode,
        latency_ms: result.latencyMs,
        last_error: result.error?.slice(0, 500) ?? null,
        next_attempt_at: nextAt,
        updated_at: now,
      });

    if (result.ok) {
      // Skipped when nothing would change (to the minute): a busy webhook's row is not rewritten,
      // and locked, by every single delivery.
      await trx('webhooks')
        .where({ id: webhookId })
        .andWhere((q) =>
          q
            .where('consecutive_failures', '<>', 0)
            .orWhereNull('last_success_at')
            .orWhere('last_success_at', '<', new Date(now.getTime() - 60_000))
            .orWhere('last_success_at', '>', now),
        )
        .update({ consecutive_failures: 0, last_success_at: now });
    } else if (outcome === 'failed') {
      await failedDelivery(trx, webhookId, now);
    }
    return outcome;
  });
}

/** Counts a failed delivery; the 5th in a row with no success in 24 h disables and notifies. */
async function failedDelivery(trx: Knex.Transaction, webhookId: string, now: Date): Promise<void> {
  const [w] = await trx('webhooks')
    .where({ id: webhookId })
    .update({ consecutive_failures: trx.raw('consecutive_failures + 1'), last_failure_at: now })
    .returning(['id', 'agent_id', 'url', 'enabled', 'consecutive_failures', 'last_success_at']);
  if (!w || !w.enabled || !shouldDisable(w.consecutive_failures, w.last_success_at, now)) return;
  const [disabled] = await trx('webhooks')
    .where({ id: webhookId, enabled: true })
    .update({ enabled: false, disabled_at: now, updated_at: now })
    .returning('id');
  if (!disabled) return;
  const agent = await trx('agents').where({ id: w.agent_id }).first('owner_id', 'handle');
  if (!agent?.owner_id) return;
  await notifyOnce(trx, {
    ownerId: agent.owner_id,
    type: 'webhook_disabled',
    agentId: w.agent_id,
    scopeKey: `${webhookId}@${now.toISOString()}`,
    data: {
      category: null,
      week: null,
      rank: null,
      handle: '@' + agent.handle,
      webhookId,
      url: w.url,
      consecutiveFailures: w.consecutive_failures,
    },
    href: `/dashboard/agents/${w.agent_id}`,
    now,
  });
}
