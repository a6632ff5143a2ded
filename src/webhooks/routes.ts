import { errorDocs, route, send } from '../http/route';
import { requireOwner } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateSecret,
  updateWebhook,
} from './service';
import { MAX_URL_LENGTH, WEBHOOK_EVENTS } from './policy';

const uuid = { type: 'string', format: 'uuid' } as const;
const agentParams = { type: 'object', required: ['id'], properties: { id: uuid } } as const;
const hookParams = {
  type: 'object',
  required: ['id', 'webhookId'],
  properties: { id: uuid, webhookId: uuid },
} as const;
const deliveryParams = {
  type: 'object',
  required: ['id', 'webhookId', 'deliveryId'],
  properties: { id: uuid, webhookId: uuid, deliveryId: uuid },
} as const;

const eventsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
} as const;
const urlSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'https URL; loopback, private, link-local, multicast and reserved destinations are refused',
} as const;

const webhookSchema = {
  type: 'object',
  required: ['id', 'url', 'events', 'enabled'],
  properties: { id: { type: 'string' }, url: { type: 'string' }, events: eventsSchema, enabled: { type: 'boolean' } },
} as const;

const deliverySchema = {
  type: 'object',
  required: ['id', 'eventId', 'type', 'attempt', 'status', 'responseCode', 'latencyMs', 'createdAt', 'nextAttemptAt'],
  properties: {
    id: { type: 'string' },
    eventId: { type: 'string', description: 'The webhook-id header of every attempt' },
    type: { type: 'string' },
    attempt: { type: 'integer', description: 'Attempts made so far, redeliveries included' },
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    responseCode: { type: ['integer', 'null'] },
    latencyMs: { type: ['integer', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** Every route under /owner/agents/{id}/webhooks: the agent must be one of the session owner's. */
const common = errorDocs({
  INVALID_SESSION: true,
  NOT_AGENT_OWNER: 'the agent belongs to another owner',
  NOT_FOUND: 'unknown agent or webhook',
});
const unsafe = errorDocs({ ...common, CSRF_TOKEN_INVALID: true });
const urlErrors = errorDocs({
  VALIDATION_FAILED: true,
  WEBHOOK_URL_FORBIDDEN:
    'not https, credentials in the URL, or a forbidden destination: loopback, private, link-local, multicast, reserved or cloud metadata address (such as 169.254.169.254, 168.63.129.16, 100.100.100.200, 192.0.0.192, fd00:ec2::254), written as an address in any form or reached through a name; every forbidden destination gets the same message',
});

const base = '/owner/agents/:id/webhooks';

export const webhookRoutes = [
  route({
    method: 'post',
    path: base,
    operationId: 'createWebhook',
    summary: "Registers a signed webhook for one of the owner's agents; the secret is shown this once",
    tags: ['webhooks'],
    auth: 'session',
    params: agentParams,
    body: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        url: urlSchema,
        events: { ...eventsSchema, default: [...WEBHOOK_EVENTS], description: 'Defaults to every event' },
      },
    },
    responses: {
      201: {
        description: 'Created; secret is whsec_<base64 of 32 bytes> (Standard Webhooks)',
        schema: dataEnvelope({
          ...webhookSchema,
          required: [...webhookSchema.required, 'secret'],
          properties: { ...webhookSchema.properties, secret: { type: 'string' } },
        }),
      },
    },
    errors: { ...urlErrors, WEBHOOK_LIMIT_REACHED: '10 per agent', ...unsafe },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      ctx.set('Cache-Control', 'no-store'); // the answer carries the secret
      send(ctx, 201, await createWebhook(ctx.deps, p.owner.id, ctx.state.params.id, ctx.state.body));
    },
  }),
  route({
    method: 'get',
    path: base,
    operationId: 'listWebhooks',
    summary: "Lists an agent's webhooks, without secrets",
    tags: ['webhooks'],
    auth: 'session',
    params: agentParams,
    responses: {
      200: { description: 'Webhooks, oldest first', schema: dataEnvelope({ type: 'array', items: webhookSchema }) },
    },
    errors: common,
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      send(ctx, 200, await listWebhooks(ctx.deps, p.owner.id, ctx.state.params.id));
    },
  }),
  route({
    method: 'patch',
    path: `${base}/:webhookId`,
    operationId: 'updateWebhook',
    summary: 'Changes url, events or enabled (re-enabling resets the failure count)',
    tags: ['webhooks'],
    auth: 'session',
    params: hookParams,
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { url: urlSchema, events: eventsSchema, enabled: { type: 'boolean' } },
    },
    responses: {
      200: { description: 'The webhook', schema: dataEnvelope(webhookSchema) },
    },
    errors: { ...urlErrors, ...unsafe },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      send(
        ctx,
        200,
        await updateWebhook(ctx.deps, p.owner.id, ctx.state.params.id, ctx.state.params.webhookId, ctx.state.body),
      );
    },
  }),
  route({
    method: 'delete',
    path: `${base}/:webhookId`,
    operationId: 'deleteWebhook',
    summary: 'Deletes a webhook and its delivery log',
    tags: ['webhooks'],
    auth: 'session',
    params: hookParams,
    responses: {
      200: {
        description: 'Deleted',
        schema: dataEnvelope({
          type: 'object',
          required: ['id', 'deleted'],
          properties: { id: { type: 'string' }, deleted: { type: 'boolean' } },
        }),
      },
    },
    errors: unsafe,
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      await deleteWebhook(ctx.deps, p.owner.id, ctx.state.params.id, ctx.state.params.webhookId);
      send(ctx, 200, { id: ctx.state.params.webhookId, deleted: true });
    },
  }),
  route({
    method: 'post',
    path: `${base}/:webhookId/rotate-secret`,
    operationId: 'rotateWebhookSecret',
    summary:
      'Replaces the signing secret; the new one is shown this once. Deliveries are signed with both until previousSecretValidUntil (24 h)',
    tags: ['webhooks'],
    auth: 'session',
    params: hookParams,
    responses: {
      200: {
        description: 'New secret',
        schema: dataEnvelope({
          type: 'object',
          required: ['id', 'secret', 'previousSecretValidUntil'],
          properties: {
            id: { type: 'string' },
            secret: { type: 'string' },
            previousSecretValidUntil: {
              type: 'string',
              format: 'date-time',
              description: 'Until then each delivery carries a second signature made with the replaced secret',
            },
          },
        }),
      },
    },
    errors: unsafe,
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      ctx.set('Cache-Control', 'no-store'); // the answer carries the secret
      send(ctx, 200, await rotateSecret(ctx.deps, p.owner.id, ctx.state.params.id, ctx.state.params.webhookId));
    },
  }),
  route({
    method: 'get',
    path: `${base}/:webhookId/deliveries`,
    operationId: 'listWebhookDeliveries',
    summary: 'Recent deliveries (newest first, up to 100) with status, attempts, last response code and latency',
    tags: ['webhooks'],
    auth: 'session',
    params: hookParams,
    responses: {
      200: { description: 'Deliveries', schema: dataEnvelope({ type: 'array', items: deliverySchema }) },
    },
    errors: common,
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      send(ctx, 200, await listDeliveries(ctx.deps, p.owner.id, ctx.state.params.id, ctx.state.params.webhookId));
    },
  }),
  route({
    method: 'post',
    path: `${base}/:webhookId/deliveries/:deliveryId/redeliver`,
    operationId: 'redeliverWebhookDelivery',
    summary: 'Replays a past delivery once more: same webhook-id, fresh timestamp and signature',
    tags: ['webhooks'],
    auth: 'session',
    params: deliveryParams,
    responses: {
      202: { description: 'Queued; the delivery as it stands now', schema: dataEnvelope(deliverySchema) },
    },
    errors: { WEBHOOK_DISABLED: true, ...unsafe },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      send(
        ctx,
        202,
        await redeliver(
          ctx.deps,
          p.owner.id,
          ctx.state.params.id,
          ctx.state.params.webhookId,
          ctx.state.params.deliveryId,
        ),
      );
    },
  }),
];
