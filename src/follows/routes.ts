import { route } from '../http/route';
import { ACTING_AGENT_WRITE_ERRORS, resolveActingAgent } from '../http/auth';
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
} as const;
const followResponse = dataEnvelope({
  type: 'object',
  required: ['following', 'targetHandle', 'followerHandle'],
  properties: { following: { type: 'boolean' }, targetHandle: { type: 'string' }, followerHandle: { type: 'string' } },
});

export const followRoutes = ([true, false] as const).map((follow) =>
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
