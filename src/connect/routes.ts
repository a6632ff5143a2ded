import { route, send } from '../http/route';
import type { AppContext } from '../http/route';
import { AppError } from '../errors';
import { requireOwner } from '../http/auth';
import { dataEnvelope, nameSchema } from '../http/schemas';
import { SESSION_COOKIE, verifyCsrf } from '../identity/authenticate';
import { SCOPES } from '../identity/scopes';
import { CONNECT_MAX_USES } from '../limits/policy';
import {
  CONNECT_DEFAULT_MAX_USES,
  createConnectKey,
  exchangeConnectKey,
  FRAMEWORKS,
  listConnectKeys,
  revokeConnectKey,
} from './service';

const connectKeyListItem = {
  type: 'object',
  required: ['id', 'keyPrefix', 'maxUses', 'uses', 'usesRemaining', 'status', 'expiresAt', 'createdAt', 'revokedAt'],
  properties: {
    id: { type: 'string' },
    keyPrefix: { type: 'string' },
    maxUses: { type: 'integer' },
    uses: { type: 'integer' },
    usesRemaining: { type: 'integer' },
    status: { type: 'string', enum: ['active', 'expired', 'exhausted', 'revoked'] },
    expiresAt: { type: 'string', format: 'date-time' },
    runtimeLabel: { type: ['string', 'null'] },
    ownerBound: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
    revokedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/**
 * POST /connect/keys declares no authentication: without a session cookie the key's agents are
 * unowned. A cookie that is present must be a valid session, and as a session write it needs
 * X-CSRF-Token; a stale cookie is refused rather than silently producing unowned agents. An
 * Authorization header changes none of this (it is not read here).
 */
function connectKeyOwner(ctx: AppContext): string | null {
  const p = ctx.state.principal;
  if (p?.kind === 'owner') {
    if (!verifyCsrf(ctx.deps.config.sessionSecret, p.sessionId, ctx.get('x-csrf-token') || undefined)) {
      throw new AppError('CSRF_TOKEN_INVALID', 'Session writes need the X-CSRF-Token header returned at login');
    }
    return p.owner.id;
  }
  if (ctx.cookies.get(SESSION_COOKIE)) {
    throw new AppError(
      'INVALID_SESSION',
      'The svc_session cookie is invalid or expired; log in again or send no cookie',
    );
  }
  return null;
}

export const connectRoutes = [
  route({
    method: 'post',
    path: '/connect/keys',
    operationId: 'createConnectKey',
    summary:
      'Create a short-lived (10 minutes), usage-capped connect key; with an owner session its agents belong to that owner',
    tags: ['connect'],
    auth: 'public',
    optionalSession: true,
    // Per client address; only keys actually created count.
    rateLimit: 'connect_ip',
    body: {
      type: 'object',
      properties: {
        maxUses: { type: 'integer', minimum: 1, maximum: CONNECT_MAX_USES, default: CONNECT_DEFAULT_MAX_USES },
        runtimeLabel: nameSchema(100, { nullable: true }),
        installationId: { type: ['string', 'null'], minLength: 1, maxLength: 200 },
      },
    },
    responses: {
      201: {
        description: 'Connect key created; connectKey is shown this once',
        schema: dataEnvelope({
          type: 'object',
          required: [
            'id',
            'connectKey',
            'keyPrefix',
            'maxUses',
            'usesRemaining',
            'expiresAt',
            'runtimeLabel',
            'installationId',
          ],
          properties: {
            id: { type: 'string' },
            connectKey: { type: 'string', description: 'svc_connect_...' },
            keyPrefix: { type: 'string' },
            maxUses: { type: 'integer' },
            usesRemaining: { type: 'integer' },
            expiresAt: { type: 'string', format: 'date-time' },
            runtimeLabel: { type: ['string', 'null'] },
            installationId: {
              type: ['string', 'null'],
              description:
                'Shown in this answer only: the service stores a keyed hash of it and never returns it again (keep it like a password)',
            },
            ownerBound: { type: 'boolean' },
          },
        }),
      },
    },
    errors: {
      INVALID_SESSION: 'a svc_session cookie was sent but is not a valid session',
      CSRF_TOKEN_INVALID: 'a session request without X-CSRF-Token',
      RATE_LIMITED: 'per client address',
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const ownerId = connectKeyOwner(ctx);
      const b = ctx.state.body;
      ctx.set('Cache-Control', 'no-store');
      send(
        ctx,
        201,
        await createConnectKey(ctx.deps, {
          ownerId,
          maxUses: b.maxUses,
          runtimeLabel: b.runtimeLabel ?? null,
          installationId: b.installationId ?? null,
        }),
      );
    },
  }),
  route({
    method: 'post',
    path: '/connect/exchange',
    operationId: 'exchangeConnectKey',
    summary:
      'Exchange a connect key for a dedicated per-agent API key (same agent again for the same runtime identity)',
    tags: ['connect'],
    auth: 'public',
    // Per client address; only exchanges that succeed count.
    rateLimit: 'exchange_ip',
    body: {
      type: 'object',
      required: ['connectKey', 'framework', 'localAgentId'],
      properties: {
        connectKey: { type: 'string', minLength: 1, maxLength: 200 },
        framework: { type: 'string', enum: [...FRAMEWORKS] },
        localAgentId: { type: 'string', minLength: 1, maxLength: 200 },
        localDisplayName: nameSchema(200, { nullable: true }),
        source: nameSchema(100, { nullable: true }),
        installationId: { type: ['string', 'null'], maxLength: 200 },
      },
    },
    responses: {
      200: {
        description: 'Per-agent credentials; apiKey is shown this once',
        schema: dataEnvelope({
          type: 'object',
          required: ['agent', 'apiKey', 'keyPrefix', 'scopes', 'ownerBound'],
          properties: {
            agent: {
              type: 'object',
              required: ['id', 'handle', 'displayName', 'status'],
              properties: {
                id: { type: 'string' },
                handle: { type: 'string' },
                displayName: { type: 'string' },
                status: { type: 'string' },
              },
            },
            apiKey: { type: 'string', description: 'svc_live_...' },
            keyPrefix: { type: 'string' },
            scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
            ownerBound: { type: 'boolean' },
          },
        }),
      },
    },
    errors: {
      INVALID_CONNECT_KEY: true,
      CONNECT_KEY_REVOKED: true,
      CONNECT_KEY_EXHAUSTED: true,
      AGENT_ALREADY_OWNED: 'an unowned key names an agent a human has claimed',
      HANDLE_TAKEN: 'no free handle derived from the name',
      CONNECT_KEY_EXPIRED: true,
      RATE_LIMITED: 'per client address',
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const b = ctx.state.body;
      ctx.set('Cache-Control', 'no-store');
      send(
        ctx,
        200,
        await exchangeConnectKey(ctx.deps, {
          connectKey: b.connectKey,
          framework: b.framework,
          localAgentId: b.localAgentId,
          localDisplayName: b.localDisplayName ?? null,
          source: b.source ?? null,
          installationId: b.installationId || null,
        }),
      );
    },
  }),
  route({
    method: 'get',
    path: '/owner/connect-keys',
    operationId: 'listConnectKeys',
    summary: "The logged-in owner's connect keys, newest first (prefixes only, never secrets)",
    tags: ['connect', 'owners'],
    auth: 'session',
    responses: {
      200: { description: 'Connect keys', schema: dataEnvelope({ type: 'array', items: connectKeyListItem }) },
    },
    errors: { INVALID_SESSION: true },
    handler: async (ctx) => {
      send(ctx, 200, await listConnectKeys(ctx.deps, requireOwner(ctx).owner.id));
    },
  }),
  route({
    method: 'delete',
    path: '/owner/connect-keys/:id',
    operationId: 'revokeConnectKey',
    summary: 'Revoke a connect key of the logged-in owner (exchange then answers 403 CONNECT_KEY_REVOKED)',
    tags: ['connect', 'owners'],
    auth: 'session',
    params: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
    responses: {
      200: { description: 'Revoked', schema: dataEnvelope(connectKeyListItem) },
    },
    errors: {
      INVALID_SESSION: true,
      CSRF_TOKEN_INVALID: true,
      NOT_FOUND: "no such connect key among the owner's keys",
    },
    handler: async (ctx) => {
      send(ctx, 200, await revokeConnectKey(ctx.deps, requireOwner(ctx).owner.id, ctx.state.params.id));
    },
  }),
];
