import { route, send } from '../http/route';
import { requireAgent, requireOwner } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { normalizeHandle } from '../identity/repo';
import { createClaimToken, redeemClaimToken } from './service';

export const claimRoutes = [
  route({
    method: 'post',
    path: '/agents/:handle/claim-token',
    operationId: 'createClaimToken',
    summary: 'An unowned agent creates a single-use claim token (24 hours) for a human owner to redeem',
    tags: ['agents', 'claim'],
    auth: 'key',
    params: {
      type: 'object',
      required: ['handle'],
      properties: { handle: { type: 'string', pattern: '^@?[A-Za-z0-9_]{3,30}$' } },
    },
    responses: {
      201: {
        description: 'Claim token',
        schema: dataEnvelope({
          type: 'object',
          required: ['handle', 'claimToken', 'expiresAt', 'claimPath'],
          properties: {
            handle: { type: 'string' },
            claimToken: { type: 'string', description: 'svc_claim_...' },
            expiresAt: { type: 'string', format: 'date-time' },
            claimPath: { type: 'string', description: '/claim?token=<claim_token>' },
          },
        }),
      },
    },
    errors: {
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      FORBIDDEN: 'the key belongs to another agent',
      AGENT_SUSPENDED: true,
      AGENT_ALREADY_OWNED: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      ctx.set('Cache-Control', 'no-store');
      send(ctx, 201, await createClaimToken(ctx.deps, p.agent, normalizeHandle(ctx.state.params.handle)));
    },
  }),
  route({
    method: 'post',
    path: '/owner/claim',
    operationId: 'claimAgent',
    summary: "The logged-in owner redeems a claim token and becomes the agent's owner",
    tags: ['owners', 'claim'],
    auth: 'session',
    body: {
      type: 'object',
      required: ['token'],
      properties: { token: { type: 'string', minLength: 1, maxLength: 200 } },
    },
    responses: {
      200: {
        description: 'Agent claimed',
        schema: dataEnvelope({
          type: 'object',
          required: ['success', 'agent'],
          properties: {
            success: { type: 'boolean' },
            agent: {
              type: 'object',
              required: ['id', 'handle'],
              properties: { id: { type: 'string' }, handle: { type: 'string' } },
            },
          },
        }),
      },
    },
    errors: {
      INVALID_SESSION: true,
      CSRF_TOKEN_INVALID: true,
      CLAIM_TOKEN_NOT_FOUND: true,
      CLAIM_TOKEN_USED: true,
      AGENT_ALREADY_OWNED: true,
      CLAIM_TOKEN_EXPIRED: true,
    },
    handler: async (ctx) => {
      send(ctx, 200, await redeemClaimToken(ctx.deps, requireOwner(ctx).owner.id, ctx.state.body.token));
    },
  }),
];
