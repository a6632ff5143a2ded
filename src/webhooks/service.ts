import crypto from 'crypto';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../http/errors';
import { addJob } from '../db/jobs';
import { notifyOnce } from '../notifications/service';
import { decryptSecret, encryptSecret, generateWebhookSecret, webhookHeaders } from './signing';
import { checkWebhookUrl, Resolver, systemResolver } from './ssrf';
import { ownedAgent } from '../owners/service';
import { AttemptResult, postWebhook } from './deliver';
import {
  DELIVERIES_PAGE,
  DELIVERY_RETENTION_MS,
  MAX_WEBHOOKS_PER_AGENT,
  retryDelayAfter,
  ROTATION_OVERLAP_MS,
  shouldDisable,
} from './policy';

export const DELIVER_TASK = 'webhook_deliver';
/** graphile retries of a delivery job are for database errors only; HTTP failures never throw. */
const DELIVER_JOB_MAX_ATTEMPTS = 10;

interface WebhookRow {
  id: string;
  agent_id: string;
  url: string;
  secret_enc: string;
  events: string[];
  enabled: boolean;
  consecutive_failures: number;
  last_success_at: Date | null;
  created_at: Date;
}

export function webhookView(w: Pick<WebhookRow, 'id' | 'url' | 'events' | 'enabled'>) {
  return { id: w.id, url: w.url, events: w.events, enabled: w.enabled };
}

async function ownedWebhook(db: Knex, ownerId: string, agentId: string, webhookId: string): Promise<WebhookRow> {
  await ownedAgent(db, ownerId, agentId);
  const w = await db<WebhookRow>('webhooks').where({ id: webhookId, agent_id: agentId }).first();
  if (!w) throw notFound('Webhook');
  return w;
}

async function checkUrlOrThrow(deps: Deps, url: string, resolve: Resolver): Promise<string> {
  const r = await checkWebhookUrl(url, { allowPrivate: deps.config.webhookAllowPrivate }, resolve);
  // Stored and shown as the owner wrote it (deliveries parse it again, to the same address).
  if (r.ok) return url;
  if (r.code === 'VALIDATION_FAILED')
    throw new AppError(400, 'VALIDATION_FAILED', 'Request body is invalid', {
      details: [{ path: 'body/url', message: r.reason }],
    });
  throw new AppError(400, r.code, r.reason);
}

function uniqueEvents(events: string[]): string[] {
  return [...new Set(events)];
}

export interface WebhookServiceOptions {
  resolve?: Resolver;
}

export async function createWebhook(
  deps: Deps,
  ownerId: string,
  agentId: string,
  input: { url: string; events: string[] },
  opts: WebhookServiceOptions = {},
) {
  await ownedAgent(deps.db, ownerId, agentId);
  const url = await checkUrlOrThrow(deps, input.url, opts.resolve ?? systemResolver);
  const id = crypto.randomUUID();
  const secret = generateWebhookSecret();
  const events = uniqueEvents(input.events);
  await deps.db.transaction(async (trx) => {
    // Serialises creations for one agent so the cap holds under concurrency.
    await trx.raw('select 1 from agents where id = ? for update', [agentId]);
    const { count } = (await trx('webhooks').where({ agent_id: agentId }).count<{ count: number }[]>('* as count'))[0];
    if (Number(count) >= MAX_WEBHOOKS_PER_AGENT) {
      throw new AppError(409, 'WEBHOOK_LIMIT_REACHED', `An agent can have at most ${MAX_WEBHOOKS_PER_AGENT} webhooks`);
    }
    await trx('webhooks').insert({
      id,
      agent_id: agentId,
      url,
      secret_enc: encryptSecret(deps.config.sessionSecret, id, secret),
      events,
      enabled: true,
    });
  });
  return { id, url, secret, events, enabled: true };
}

export async function listWebhooks(deps: Deps, ownerId: string, agentId: string) {
  await ownedAgent(deps.db, ownerId, agentId);
  const rows = await deps
    .db<WebhookRow>('webhooks')
    .where({ agent_id: agentId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(webhookView);
}

export async function updateWebhook(
  deps: Deps,
  ownerId: string,
  agentId: string,
  webhookId: string,
  input: { url?: string; events?: string[]; enabled?: boolean },
  opts: WebhookServiceOptions = {},
) {
  await ownedWebhook(deps.db, ownerId, agentId, webhookId);
  const patch: Record<string, unknown> = { updated_at: deps.now() };
  if (input.url !== undefined) patch.url = await checkUrlOrThrow(deps, input.url, opts.resolve ?? systemResolver);
  if (input.events !== undefined) patch.events = uniqueEvents(input.events);
  if (input.enabled !== undefined) {
    patch.enabled = input.enabled;
    // Re-enabling starts a fresh failure count; disabling is the owner's choice, not a failure.
    if (input.enabled) Object.assign(patch, { consecutive_failures: 0, disabled_at: null });
  }
  const [w] = await deps
    .db<WebhookRow>('webhooks')
    .where({ id: webhookId, agent_id: agentId })
    .update(patch)
    .returning('*');
  if (!w) throw notFound('Webhook');
  return webhookView(w);
}

export async function deleteWebhook(deps: Deps, ownerId: string, agentId: string, webhookId: string): Promise<void> {
  await ownedWebhook(deps.db, ownerId, agentId, webhookId);
  await deps.db('webhooks').where({ id: webhookId, agent_id: agentId }).del();
}

export async function rotateSecret(deps: Deps, ownerId: string, agentId: string, webhookId: string) {
  await ownedWebhook(deps.db, ownerId, agentId, webhookId);
  const secret = generateWebhookSecret();
  const now = deps.now();
  const until = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  // The secret being replaced keeps signing (beside the new one) until `until`: SET reads the old row.
  const r = await deps.db.raw(
    'update webhooks set previous_secret_enc = secret_enc, previous_secret_until = ?, secret_enc = ?, updated_at = ? where id = ? and agent_id = ?',
    [until, encryptSecret(deps.config.sessionSecret, webhookId, secret), now, webhookId, agentId],
  );
  // Deleted since the ownership check (a concurrent DELETE): no secret for a webhook that is gone.
  if (r.rowCount !== 1) throw notFound('Webhook');
  return { id: webhookId, secret, previousSecretValidUntil: until.toISOString() };
}

function iso(d: Date | string | null): string | null {
  return d ? new Date(d).toISOString() : null;
}

function deliveryView(d: any) {
  return {
    id: d.id,
    eventId: d.event_id,
    type: d.type,
    attempt: d.attempts,
    status: d.status,
    responseCode: d.response_code ?? null,
    latencyMs: d.latency_ms ?? null,
    createdAt: iso(d.created_at),
    nextAttemptAt: iso(d.next_attempt_at),
  };
}

export async function listDeliveries(deps: Deps, ownerId: string, agentId: string, webhookId: string) {
  await ownedWebhook(deps.db, ownerId, agentId, webhookId);
  const rows = await deps
    .db('webhook_deliveries as d')
    .join('webhook_events as e', 'e.id', 'd.event_id')
    .where('d.webhook_id', webhookId)
    .orderBy([
      { column: 'd.created_at', order: 'desc' },
      { column: 'd.id', order: 'desc' },
    ])
    .limit(DELIVERIES_PAGE)
    .select('d.*', 'e.type');
  return rows.map(deliveryView);
}

/** Queues one more attempt of a past delivery: same webhook-id, fresh timestamp and signature. */
export async function redeliver(deps: Deps, ownerId: string, agentId: string, webhookId: string, deliveryId: string) {
  const w = await ownedWebhook(deps.db, ownerId, agentId, webhookId);
  if (!w.enabled) throw new AppError(409, 'WEBHOOK_DISABLED', 'The webhook is disabled; enable it before redelivering');
  return deps.db.transaction(async (trx) => {
    const d = await trx('webhook_deliveries as d')
      .join('webhook_events as e', 'e.id', 'd.event_id')
      .where({ 'd.id': deliveryId, 'd.webhook_id': webhookId })
      .first('d.*', 'e.type');
    if (!d) throw notFound('Delivery');
    const token = 'redeliver:' + crypto.randomUUID();
    await addJob(trx, DELIVER_TASK, { deliveryId, token }, { maxAttempts: DELIVER_JOB_MAX_ATTEMPTS });
    return deliveryView(d);
  });
}

// ---------------------------------------------------------------------------------------------
// Fan-out and delivery (worker side)

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

export interface DeliverJob {
  deliveryId: string;
  /** Retry-chain attempt (1..8). */
  step?: number;
  /** Owner-requested replay, 'redeliver:<uuid>'. */
  token?: string;
}

export function isDeliverJob(p: any): p is DeliverJob {
  return (
    !!p &&
    typeof p.deliveryId === 'string' &&
    /^[0-9a-f-]{36}$/i.test(p.deliveryId) &&
    ((Number.isInteger(p.step) && p.step >= 1) || (typeof p.token === 'string' && p.token.startsWith('redeliver:')))
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

  const now = deps.now();
  const secrets = [decryptSecret(deps.config.sessionSecret, row.webhook_id, row.secret_enc)];
  if (row.previous_secret_enc && new Date(row.previous_secret_until) > now) {
    // The replaced secret is a courtesy of the overlap: one sealed under a former SESSION_SECRET
    // (the rotation that followed a SESSION_SECRET change) is left out, not a failed delivery.
    try {
      secrets.push(decryptSecret(deps.config.sessionSecret, row.webhook_id, row.previous_secret_enc));
    } catch {
      deps.log.warn(
        { webhookId: row.webhook_id },
        'previous webhook secret unreadable (SESSION_SECRET changed); signing with the current one only',
      );
    }
  }
  const body = JSON.stringify(row.payload);
  const result = await postWebhook({
    url: row.url,
    headers: webhookHeaders(secrets, row.event_id, now, body),
    body,
    guard: { allowPrivate: deps.config.webhookAllowPrivate },
    timeoutMs: opts.timeoutMs,
    resolve: opts.resolve,
  });
  return recordAttempt(deps, job, token, row.webhook_id, result);
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
          DELIVER_TASK,
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
