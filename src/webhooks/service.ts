import crypto from 'crypto';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import { addJob } from '../db/jobs';
import { encryptSecret, generateWebhookSecret } from './signing';
import { checkWebhookUrl, Resolver, systemResolver } from './ssrf';
import { ownedAgent } from '../owners/service';
import { DELIVERIES_PAGE, MAX_WEBHOOKS_PER_AGENT, ROTATION_OVERLAP_MS } from './policy';
import { DELIVER_JOB_MAX_ATTEMPTS } from './delivery';

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
    throw new AppError('VALIDATION_FAILED', 'Request body is invalid', {
      details: [{ path: 'body/url', message: r.reason }],
    });
  // The owner gets the generic reason; which address was forbidden stays in the server's log.
  if (r.detail) deps.log.info({ host: new URL(url).hostname, detail: r.detail }, 'webhook destination refused');
  throw new AppError(r.code, r.reason);
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
      throw new AppError('WEBHOOK_LIMIT_REACHED', `An agent can have at most ${MAX_WEBHOOKS_PER_AGENT} webhooks`);
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

function deliveryView(d: {
  id: string;
  event_id: string;
  type: string;
  attempts: number;
  status: string;
  response_code: number | null;
  latency_ms: number | null;
  created_at: Date;
  next_attempt_at: Date | null;
}) {
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
  if (!w.enabled) throw new AppError('WEBHOOK_DISABLED', 'The webhook is disabled; enable it before redelivering');
  return deps.db.transaction(async (trx) => {
    const d = await trx('webhook_deliveries as d')
      .join('webhook_events as e', 'e.id', 'd.event_id')
      .where({ 'd.id': deliveryId, 'd.webhook_id': webhookId })
      .first('d.*', 'e.type');
    if (!d) throw notFound('Delivery');
    const token = 'redeliver:' + crypto.randomUUID();
    await addJob(trx, 'webhook_deliver', { deliveryId, token }, { maxAttempts: DELIVER_JOB_MAX_ATTEMPTS });
    return deliveryView(d);
  });
}
