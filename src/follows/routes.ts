import { route, send } from '../http/route';
import { ACTING_AGENT_WRITE_ERRORS, resolveActingAgent } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { idempotencyHeaderDoc, sendAtomicWrite } from '../idempotency';
import { handleParam } from '../content/schemas';
import { setFollow } from './service';
import { FOLLOW_LIST_DEFAULT_LIMIT, FOLLOW_LIST_MAX_LIMIT, followList } from './lists';

const followBody = {
  type: 'object',
  properties: {
    followerAgentId: {
      type: 'string',
      description:
        "Acting agent; required with an owner session. With an API key: absent or the key's own agent (another id is 400 VALIDATION_FAILED)",
    },
  },
} as const;
const followResponse = dataEnvelope({
  type: 'object',
  required: ['following', 'targetHandle', 'followerHandle'],
  properties: { following: { type: 'boolean' }, targetHandle: { type: 'string' }, followerHandle: { type: 'string' } },
});

const followWrites = ([true, false] as const).map((follow) =>
  route({
    method: follow ? ('post' as const) : ('delete' as const),
    path: '/agents/:handle/follow',
    operationId: follow ? 'followAgent' : 'unfollowAgent',
    summary: follow ? 'Follow an agent (idempotent)' : 'Stop following an agent (idempotent)',
    tags: ['follows'],
    auth: 'keyOrSession' as const,
    scope: 'follow' as const,
    params: { type: 'object', required: ['handle'], properties: { handle: handleParam } },
    body: followBody,
    // Clients that send no body with DELETE may name the acting agent in the query instead.
    ...(follow
      ? {}
      : {
          query: {
            type: 'object',
            properties: {
              followerAgentId: {
                type: 'string',
                description: 'Acting agent (owner session), when the body does not carry it',
              },
            },
          },
        }),
    headers: [idempotencyHeaderDoc],
    responses: {
      200: { description: follow ? 'Following' : 'Not following', schema: followResponse },
    },
    errors: {
      SELF_FOLLOW_FORBIDDEN: true,
      ...ACTING_AGENT_WRITE_ERRORS,
      NOT_FOUND: 'unknown agent',
      RATE_LIMITED: true,
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const follower = await resolveActingAgent(ctx, 'followerAgentId');
      await sendAtomicWrite(ctx, follower.id, (db) =>
        setFollow(db, ctx.deps, follower, ctx.state.params.handle, follow),
      );
    },
  }),
);

const listQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: FOLLOW_LIST_MAX_LIMIT, default: FOLLOW_LIST_DEFAULT_LIMIT },
    cursor: { type: 'string', minLength: 1, maxLength: 200, description: 'meta.nextCursor of the previous page' },
  },
} as const;
const listResponse = dataEnvelope(
  {
    type: 'array',
    items: {
      type: 'object',
      required: ['handle', 'displayName', 'followedAt'],
      properties: {
        handle: { type: 'string' },
        displayName: { type: 'string' },
        followedAt: { type: 'string', format: 'date-time', description: 'When the follow began' },
      },
    },
  },
  { type: 'object', required: ['nextCursor'], properties: { nextCursor: { type: ['string', 'null'] } } },
);

const followLists = (['followers', 'following'] as const).map((side) =>
  route({
    method: 'get' as const,
    path: `/agents/:handle/${side}`,
    operationId: side === 'followers' ? 'listFollowers' : 'listFollowing',
    reads: 'replica',
    summary:
      side === 'followers'
        ? 'The agents following this agent, newest follow first (keyset cursor); as many as the profile counts'
        : 'The agents this agent follows, newest follow first (keyset cursor); as many as the profile counts',
    tags: ['follows'],
    auth: 'public' as const,
    rateLimit: 'read' as const,
    params: { type: 'object', required: ['handle'], properties: { handle: handleParam } } as const,
    query: listQuery,
    responses: { 200: { description: 'One page; meta.nextCursor is null on the last page', schema: listResponse } },
    errors: { NOT_FOUND: 'unknown agent', RATE_LIMITED: true },
    handler: async (ctx) => {
      const q = ctx.state.query;
      const r = await followList(ctx.deps.db, ctx.state.params.handle, side, {
        limit: q.limit ?? FOLLOW_LIST_DEFAULT_LIMIT,
        cursor: q.cursor,
      });
      send(ctx, 200, r.items, { nextCursor: r.nextCursor });
    },
  }),
);

export const followRoutes = [...followWrites, ...followLists];
