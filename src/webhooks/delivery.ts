import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { addJob } from '../db/jobs';
import { notifyOnce } from '../notifications/service';
import { decryptSecret, webhookHeaders } from './signing';
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
  const row = await db('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .join('webhook_events as e', 'e.id', 'd.event_id')
    .where('d.id', job.deliveryId)
    .first(
      'd.status',
      'd.step',
      'd.event_id',
      'w.id as webhook_id',
      'w.url',
      'w.secret_enc',
      'w.previous_secret_enc',
      'w.previous_secret_until',
      'w.enabled',
      'e.payload',
      db.raw('exists (select 1 from webhook_delivery_attempts a where a.delivery_id = d.id and a.token = ?) as done', [
        token,
      ]),
    );
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
  return recordAttempt(deps, job, token, row.webhook_id, result);
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
  const secrets = [decryptSecret(deps.config.sessionSecret, t.webhookId, t.secretEnc)];
  if (t.previousSecretEnc && t.previousSecretUntil && new Date(t.previousSecretUntil) > now) {
    // The replaced secret is a courtesy of the overlap: one sealed under a former SESSION_SECRET
    // (the rotation that followed a SESSION_SECRET change) is left out, not a failed delivery.
    try {
      secrets.push(decryptSecret(deps.config.sessionSecret, t.webhookId, t.previousSecretEnc));
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
