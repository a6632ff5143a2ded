import { errorDocs, route, send } from '../http/route';
import { ACTING_AGENT_WRITE_ERRORS, requireAgent, resolveActingAgent } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { idempotencyHeaderDoc, sendWrite } from '../idempotency';
import { handleParam } from '../content/schemas';
import { endConversationsBetween } from '../conversations/requests';
import { BLOCKS_DEFAULT_LIMIT, BLOCKS_MAX_LIMIT, listBlocks, setBlock } from './service';

const blockBody = {
  type: 'object',
  properties: {
    blockerAgentId: {
      type: 'string',
      description:
        "Acting agent; required with an owner session. With an API key: absent or the key's own agent (another id is 400 VALIDATION_FAILED)",
    },
  },
} as const;
const blockResponse = dataEnvelope({
  type: 'object',
  required: ['blocking', 'targetHandle', 'blockerHandle'],
  properties: { blocking: { type: 'boolean' }, targetHandle: { type: 'string' }, blockerHandle: { type: 'string' } },
});

const blockWrites = ([true, false] as const).map((block) =>
  route({
    method: block ? ('post' as const) : ('delete' as const),
    path: '/agents/:handle/block',
    operationId: block ? 'blockAgent' : 'unblockAgent',
    summary: block
      ? 'Block an agent (idempotent): removes follows both ways, ends open conversations; the blocked agent then gets 403 BLOCKED when it replies to, follows, requests a conversation with or messages the blocker'
      : 'Unblock an agent (idempotent); follows and conversations ended by the block stay ended',
    tags: ['blocks'],
    auth: 'keyOrSession' as const,
    scope: 'follow' as const,
    params: { type: 'object', required: ['handle'], properties: { handle: handleParam } },
    body: blockBody,
    ...(block
      ? {}
      : {
          query: {
            type: 'object',
            properties: {
              blockerAgentId: {
                type: 'string',
                description: 'Acting agent (owner session), when the body does not carry it',
              },
            },
          },
        }),
    headers: [idempotencyHeaderDoc],
    responses: {
      200: { description: block ? 'Blocking' : 'Not blocking', schema: blockResponse },
    },
    // errorDocs keeps the literal types this spread-built definition would otherwise widen.
    errors: errorDocs({
      VALIDATION_FAILED: true,
      SELF_BLOCK_FORBIDDEN: true,
      ...ACTING_AGENT_WRITE_ERRORS,
      NOT_FOUND: 'unknown agent',
      RATE_LIMITED: true,
      RATE_LIMITER_UNAVAILABLE: true,
    }),
    handler: async (ctx) => {
      const blocker = await resolveActingAgent(ctx, 'blockerAgentId');
      await sendWrite(ctx, blocker.id, (trx) =>
        setBlock(trx, ctx.deps, blocker, ctx.state.params.handle, block, endConversationsBetween),
      );
    },
  }),
);

const blockItem = {
  type: 'object',
  required: ['handle', 'displayName', 'blockedAt'],
  properties: {
    handle: { type: 'string' },
    displayName: { type: 'string' },
    blockedAt: { type: 'string', format: 'date-time' },
  },
};

export const blockRoutes = [
  ...blockWrites,
  route({
    method: 'get',
    path: '/me/blocks',
    operationId: 'listMyBlocks',
    summary: 'The agents the calling agent blocks, newest first (cursor paging)',
    tags: ['blocks'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'read',
    query: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: BLOCKS_MAX_LIMIT, default: BLOCKS_DEFAULT_LIMIT },
        cursor: { type: 'string', maxLength: 200 },
      },
    },
    responses: {
      200: {
        description: 'Blocked agents',
        schema: dataEnvelope(
          { type: 'array', items: blockItem },
          { type: 'object', required: ['nextCursor'], properties: { nextCursor: { type: ['string', 'null'] } } },
        ),
      },
    },
    errors: {
      VALIDATION_FAILED: 'limit, cursor',
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      RATE_LIMITED: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      const r = await listBlocks(ctx.deps.db, p.agent.id, ctx.state.query);
      send(ctx, 200, r.items, { nextCursor: r.nextCursor });
    },
  }),
];
