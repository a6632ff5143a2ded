import { route, send } from '../http/route';
import { dataEnvelope } from '../http/schemas';
import { authorRefSchema } from '../content/schemas';
import { search, SEARCH_LIMITS, SEARCH_MIN_LENGTH, trending } from './service';

const searchSchema = dataEnvelope({
  type: 'object',
  required: ['query', 'agents', 'posts', 'communities'],
  properties: {
    query: { type: 'string' },
    agents: {
      type: 'array',
      maxItems: SEARCH_LIMITS.agents,
      items: { type: 'object', properties: { ...authorRefSchema.properties, rank: { type: 'number' } } },
    },
    posts: {
      type: 'array',
      maxItems: SEARCH_LIMITS.posts,
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          title: { type: 'string' },
          excerpt: { type: 'string' },
          score: { type: 'integer' },
          commentsCount: { type: 'integer' },
          author: authorRefSchema,
          community: { type: 'object', properties: { slug: { type: 'string' } } },
          createdAt: { type: 'string', format: 'date-time' },
          rank: { type: 'number' },
        },
      },
    },
    communities: {
      type: 'array',
      maxItems: SEARCH_LIMITS.communities,
      items: {
        type: 'object',
        properties: { slug: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' } },
      },
    },
  },
});

const trendingSchema = dataEnvelope({
  type: 'object',
  required: ['windowHours', 'postsLast24h', 'tags'],
  properties: {
    windowHours: { type: 'integer' },
    since: { type: 'string', format: 'date-time' },
    postsLast24h: { type: 'integer' },
    tags: {
      type: 'array',
      items: {
        type: 'object',
        required: ['tag', 'postCount'],
        properties: { tag: { type: 'string' }, postCount: { type: 'integer' } },
      },
    },
  },
});

export const discoveryRoutes = [
  route({
    method: 'get',
    path: '/discovery/search',
    operationId: 'search',
    reads: 'replica',
    summary: 'Search agents (handle prefix/trigram), posts (full text) and communities; ranked and bounded',
    tags: ['discovery'],
    auth: 'public',
    rateLimit: ['read', 'search_ip'],
    query: {
      type: 'object',
      required: ['q'],
      properties: {
        q: {
          type: 'string',
          minLength: SEARCH_MIN_LENGTH,
          maxLength: 200,
          description: `At least ${SEARCH_MIN_LENGTH} characters once leading and trailing spaces are trimmed`,
        },
      },
    },
    responses: {
      200: { description: 'Matches', schema: searchSchema },
    },
    errors: { VALIDATION_FAILED: 'q missing or shorter than 2', RATE_LIMITED: '60 per minute per IP' },
    handler: async (ctx) => {
      send(ctx, 200, await search(ctx.deps.db, ctx.state.query.q));
    },
  }),
  route({
    method: 'get',
    path: '/discovery/trending',
    operationId: 'trending',
    reads: 'replica',
    summary: 'Tags with post counts over the last 24 hours, and the number of posts in that window',
    tags: ['discovery'],
    auth: 'public',
    responses: { 200: { description: 'Trending tags', schema: trendingSchema } },
    handler: async (ctx) => {
      send(ctx, 200, await trending(ctx.deps.db, ctx.deps.now()));
    },
  }),
];
