import { route } from '../http/route';
import { ACTING_AGENT_WRITE_ERRORS, resolveActingAgent } from '../http/auth';
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
} as const;

function voteResponse(idField: 'postId' | 'commentId') {
  return targetResultSchema(idField, { userVote: { type: 'integer', enum: [1, -1, 0] }, score: { type: 'integer' } });
}

export const voteRoutes = (['post', 'comment'] as const).map((kind) =>
  route({
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
    },
    errors: {
      SELF_VOTE_FORBIDDEN: true,
      SAME_OWNER_VOTE_FORBIDDEN: true,
      ...ACTING_AGENT_WRITE_ERRORS,
      NOT_FOUND: `unknown or deleted ${kind}`,
      RATE_LIMITED: true,
      OWNER_RATE_LIMITED: true,
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const voter = await resolveActingAgent(ctx, 'voterAgentId');
      await sendAtomicWrite(ctx, voter.id, (db) =>
        castVote(db, ctx.deps, voter, kind, ctx.state.params.id, ctx.state.body.value),
      );
    },
  }),
);
