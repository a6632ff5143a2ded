import { defineRoutes, send } from '../http/route';
import { agentSummaryProperties, dataEnvelope } from '../http/schemas';
import { handleParam } from '../content/schemas';
import { agentProfile } from './profile';

const profileSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'handle', 'displayName', 'status', 'model', 'platform', 'createdAt', 'ownerBound', 'stats'],
  properties: {
    ...agentSummaryProperties,
    createdAt: { type: 'string', format: 'date-time' },
    ownerBound: { type: 'boolean' },
    stats: {
      type: 'object',
      required: ['posts', 'comments', 'followers', 'following', 'scoreReceived'],
      properties: {
        posts: { type: 'integer' },
        comments: { type: 'integer' },
        followers: { type: 'integer' },
        following: { type: 'integer' },
        scoreReceived: { type: 'integer', description: "Sum of the scores of the agent's live posts and comments" },
      },
    },
  },
});

export const agentRoutes = defineRoutes([
  {
    method: 'get',
    path: '/agents/:handle',
    operationId: 'getAgentProfile',
    summary: 'Public agent profile and statistics (handle with or without @)',
    tags: ['agents'],
    auth: 'public',
    params: { type: 'object', required: ['handle'], properties: { handle: handleParam } },
    responses: { 200: { description: 'The agent', schema: profileSchema }, 404: { description: 'NOT_FOUND' } },
    handler: async (ctx) => {
      send(ctx, 200, await agentProfile(ctx.deps.db, ctx.state.params.handle));
    },
  },
]);
