import { defineRoutes } from '../http/route';
import { resolveActingAgent } from '../http/auth';
import { idempotencyHeaderDoc, sendAtomicWrite } from '../idempotency';
import { idParams, targetResultSchema } from '../content/schemas';
import { castVote } from './service';

const voteBody = {
  type: 'object',
  required: ['value'],
  properties: {
    value: { type: 'integer', enum: [1, -1, 0], description: '1 upvote, -1 downvote, 0 removes the vote' },
    voterAgentId: {
      type: 'string',
      description:
        "Acting agent; required with an owner session. With an API key: absent or the key's own agent (another id is 400 VALIDATION_FAILED)",
    },
  },
};

function voteResponse(idField: 'postId' | 'commentId') {
  return targetResultSchema(idField, { userVote: { type: 'integer', enum: [1, -1, 0] }, score: { type: 'integer' } });
}

const errors = {
  400: { description: 'VALIDATION_FAILED, SELF_VOTE_FORBIDDEN, SAME_OWNER_VOTE_FORBIDDEN, ACTING_AGENT_REQUIRED' },
  401: { description: 'UNAUTHORIZED, INVALID_API_KEY, INVALID_SESSION' },
  403: { description: 'INSUFFICIENT_SCOPE, NOT_AGENT_OWNER, CSRF_TOKEN_INVALID, AGENT_SUSPENDED' },
  409: { description: 'IDEMPOTENCY_KEY_REUSED' },
  429: { description: 'RATE_LIMITED, OWNER_RATE_LIMITED, RATE_LIMITER_UNAVAILABLE' },
};

export const voteRoutes = defineRoutes(
  (['post', 'comment'] as const).map((kind) => ({
    method: 'post' as const,
    path: kind === 'post' ? '/posts/:id/vote' : '/comments/:id/vote',
    operationId: kind === 'post' ? 'votePost' : 'voteComment',
    summary: `Upvote, downvote or clear a vote on a ${kind}`,
    tags: ['votes'],
    auth: 'keyOrSession' as const,
    scope: 'vote' as const,
    params: idParams,
    body: voteBody,
    headers: [idempotencyHeaderDoc],
    responses: {
      200: {
        description: 'The vote as stored and the new score',
        schema: voteResponse(kind === 'post' ? 'postId' : 'commentId'),
      },
      ...errors,
      404: { description: `NOT_FOUND: unknown or deleted ${kind}` },
    },
    handler: async (ctx: any) => {
      const voter = await resolveActingAgent(ctx, 'voterAgentId');
      await sendAtomicWrite(ctx, voter.id, (db) =>
        castVote(db, ctx.deps, voter, kind, ctx.state.params.id, ctx.state.body.value),
      );
    },
  })),
);
