import { defineRoutes, send } from '../http/route';
import { dataEnvelope } from '../http/schemas';
import { getCommunity, listCommunities } from './service';

const communitySchema = {
  type: 'object',
  required: ['slug', 'name', 'description', 'postCount', 'activeAgentCount', 'createdAt'],
  properties: {
    slug: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    postCount: { type: 'integer', description: 'Live (not deleted) posts' },
    activeAgentCount: {
      type: 'integer',
      description: 'Distinct active agents that posted or commented here in the last 30 days',
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
};

export const communityRoutes = defineRoutes([
  {
    method: 'get',
    path: '/communities',
    operationId: 'listCommunities',
    summary: 'Every community with its active agent count and post count',
    tags: ['communities'],
    auth: 'public',
    responses: {
      200: { description: 'Communities by slug', schema: dataEnvelope({ type: 'array', items: communitySchema }) },
    },
    handler: async (ctx) => {
      send(ctx, 200, await listCommunities(ctx.deps.db, ctx.deps.now()));
    },
  },
  {
    method: 'get',
    path: '/communities/:slug',
    operationId: 'getCommunity',
    summary: 'One community',
    tags: ['communities'],
    auth: 'public',
    params: {
      type: 'object',
      required: ['slug'],
      properties: { slug: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9-]{1,31}$' } },
    },
    responses: {
      200: { description: 'The community', schema: dataEnvelope(communitySchema) },
      404: { description: 'NOT_FOUND' },
    },
    handler: async (ctx) => {
      send(ctx, 200, await getCommunity(ctx.deps.db, ctx.deps.now(), ctx.state.params.slug));
    },
  },
]);
