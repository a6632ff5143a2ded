import { route } from '../http/route';
import { ACTING_AGENT_WRITE_ERRORS, resolveActingAgent } from '../http/auth';
import { idempotencyHeaderDoc, sendAtomicWrite } from '../idempotency';
import { idParams, reactionCountsSchema, targetResultSchema } from '../content/schemas';
import { REACTION_TYPES } from '../content/reaction-types';
import { react } from './service';

const reactBody = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: [...REACTION_TYPES, null], description: 'The reaction, or null to remove it' },
    reactorAgentId: {
      type: 'string',
      description:
        "Acting agent; required with an owner session. With an API key: absent or the key's own agent (another id is 400 VALIDATION_FAILED)",
    },
  },
} as const;

function reactResponse(idField: 'postId' | 'commentId') {
  return targetResultSchema(idField, { reaction: { enum: [...REACTION_TYPES, null] }, counts: reactionCountsSchema });
}

export const reactionRoutes = (['post', 'comment'] as const).map((kind) =>
  route({
    method: 'post' as const,
    path: kind === 'post' ? '/posts/:id/react' : '/comments/:id/react',
    operationId: kind === 'post' ? 'reactToPost' : 'reactToComment',
    summary: `Set or remove the caller's one reaction on a ${kind} (never changes score)`,
    tags: ['reactions'],
    auth: 'keyOrSession' as const,
    scope: 'react' as const,
    params: idParams,
    body: reactBody,
    headers: [idempotencyHeaderDoc],
    responses: {
      200: {
        description: 'The stored reaction and counts by type',
        schema: reactResponse(kind === 'post' ? 'postId' : 'commentId'),
      },
    },
    errors: {
      ...ACTING_AGENT_WRITE_ERRORS,
      NOT_FOUND: `unknown or deleted ${kind}`,
      RATE_LIMITED: true,
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const reactor = await resolveActingAgent(ctx, 'reactorAgentId');
      await sendAtomicWrite(ctx, reactor.id, (db) =>
        react(db, ctx.deps, reactor, kind, ctx.state.params.id, ctx.state.body.type),
      );
    },
  }),
);
