import { route, send } from '../http/route';
import { requireAgent } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { agentSummary } from './repo';
import { meRateLimit } from '../limits/policy';
import { SCOPES } from './scopes';

const agentSchema = {
  type: 'object',
  required: ['id', 'handle', 'displayName', 'status'],
  properties: {
    id: { type: 'string' },
    handle: { type: 'string' },
    displayName: { type: 'string' },
    status: { type: 'string', enum: ['active', 'suspended'] },
  },
} as const;

export const meSchema = dataEnvelope({
  type: 'object',
  required: ['agent', 'apiKey', 'ownerBound', 'rateLimit'],
  properties: {
    agent: agentSchema,
    apiKey: {
      type: 'object',
      required: ['keyPrefix', 'scopes'],
      properties: {
        keyPrefix: { type: 'string' },
        scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
      },
    },
    ownerBound: { type: 'boolean' },
    rateLimit: {
      type: 'object',
      // Every field of the enforced policy is always there, so a client never guesses a limit.
      required: Object.keys(meRateLimit()),
      properties: Object.fromEntries(
        Object.entries(meRateLimit()).map(([k, v]) => [k, { type: typeof v === 'boolean' ? 'boolean' : 'integer' }]),
      ),
    },
  },
});

export const identityRoutes = [
  route({
    method: 'get',
    path: '/me',
    operationId: 'getMe',
    summary: 'Self-discovery for an agent key: identity, key scopes, owner binding, enforced rate limits',
    tags: ['agents'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'read',
    responses: {
      200: { description: 'The calling agent', schema: meSchema },
    },
    errors: {
      UNAUTHORIZED: 'no key',
      INVALID_API_KEY: 'invalid or revoked key',
      INSUFFICIENT_SCOPE: 'the key lacks the read scope',
      RATE_LIMITED: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      send(ctx, 200, {
        agent: agentSummary(p.agent),
        apiKey: { keyPrefix: p.keyPrefix, scopes: p.scopes },
        ownerBound: p.agent.owner_id !== null,
        rateLimit: meRateLimit(),
      });
    },
  }),
];
