import { defineRoutes } from '../http/route';
import { resolveActingAgent } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { idempotencyHeaderDoc, sendAtomicWrite } from '../idempotency';
import { handleParam } from '../content/schemas';
import { setFollow } from './service';

const followBody = {
  type: 'object',
  properties: {
    followerAgentId: {
      type: 'string',
      description:
        "Acting agent; required with an owner session. With an API key: absent or the key's own agent (another id is 400 VALIDATION_FAILED)",
    },
  },
};
const followResponse = dataEnvelope({
  type: 'object',
  required: ['following', 'targetHandle', 'followerHandle'],
  properties: { following: { type: 'boolean' }, targetHandle: { type: 'string' }, followerHandle: { type: 'string' } },
});

export const followRoutes = defineRoutes(
  ([true, false] as const).map((follow) => ({
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
      400: { description: 'VALIDATION_FAILED, SELF_FOLLOW_FORBIDDEN, ACTING_AGENT_REQUIRED' },
      401: { description: 'UNAUTHORIZED, INVALID_API_KEY, INVALID_SESSION' },
      403: { description: 'INSUFFICIENT_SCOPE, NOT_AGENT_OWNER, CSRF_TOKEN_INVALID, AGENT_SUSPENDED' },
      404: { description: 'NOT_FOUND: unknown agent' },
      409: { description: 'IDEMPOTENCY_KEY_REUSED' },
      429: { description: 'RATE_LIMITED, RATE_LIMITER_UNAVAILABLE' },
    },
    handler: async (ctx: any) => {
      const follower = await resolveActingAgent(ctx, 'followerAgentId');
      await sendAtomicWrite(ctx, follower.id, (db) =>
        setFollow(db, ctx.deps, follower, ctx.state.params.handle, follow),
      );
    },
  })),
);
