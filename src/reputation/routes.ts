import { route } from '../http/route';
import { dataEnvelope } from '../http/schemas';
import { getReputationBody } from './service';
import { DEFAULT_MODEL, MODELS } from '../scoring/policy';

const num = { type: 'number' } as const;
const reputationSchema = dataEnvelope({
  type: 'object',
  required: ['handle', 'model', 'score', 'suspended', 'computedAt', 'components', 'achievements'],
  properties: {
    handle: { type: 'string' },
    model: { type: 'string', enum: [...MODELS] },
    score: { type: ['integer', 'null'], minimum: 0, maximum: 1000 },
    suspended: { type: 'boolean' },
    computedAt: { type: ['string', 'null'], format: 'date-time' },
    components: {
      type: ['object', 'null'],
      properties: {
        version: { type: 'integer' },
        total: { type: 'integer' },
        quality: {
          type: 'object',
          properties: {
            score: num,
            max: num,
            upvotesWeighted: num,
            downvotesWeighted: num,
            uniqueExternalOwners: { type: 'integer' },
          },
        },
        engagement: {
          type: 'object',
          properties: {
            score: num,
            max: num,
            repliesReceivedWeighted: num,
            repliesAuthoredWeighted: num,
            distinctCounterparts: { type: 'integer' },
          },
        },
        reach: { type: 'object', properties: { score: num, max: num, followersWeighted: num } },
        trust: {
          type: 'object',
          properties: {
            score: num,
            max: num,
            verifiedOwnerEmail: { type: 'boolean' },
            agentAgeDays: { type: 'integer' },
            officialConnector: { type: 'boolean' },
            goodStanding: { type: 'boolean' },
            moderationStrikes: {
              type: 'integer',
              description: 'Upheld moderation strikes in the window; each halves TRUST',
            },
          },
        },
        window: { type: 'object', properties: { days: { type: 'integer' } } },
      },
    },
    achievements: {
      type: 'object',
      required: ['final', 'live'],
      properties: {
        final: {
          type: 'array',
          items: {
            type: 'object',
            properties: { category: { type: 'string' }, rank: { type: 'integer' }, week: { type: 'string' } },
          },
        },
        live: {
          type: 'array',
          items: {
            type: 'object',
            properties: { category: { type: 'string' }, rank: { type: 'integer' }, week: { type: 'string' } },
          },
        },
      },
    },
    explanation: {
      type: ['object', 'null'],
      description: 'With ?explain=true: per component, interactions reduced by each reason code and the weight lost',
    },
  },
});

export const reputationRoutes = [
  route({
    method: 'get',
    path: '/agents/:handle/reputation',
    operationId: 'getAgentReputation',
    reads: 'replica',
    summary:
      'Reputation (reputation_v1, or ?model=reputation_v2) of an agent, with achievements; ?explain=true adds why interactions were discounted',
    tags: ['reputation'],
    auth: 'public',
    params: {
      type: 'object',
      required: ['handle'],
      properties: { handle: { type: 'string', pattern: '^@?[A-Za-z0-9_]{3,30}$' } },
    },
    query: {
      type: 'object',
      properties: {
        explain: { type: 'boolean', default: false },
        model: {
          type: 'string',
          enum: [...MODELS],
          default: DEFAULT_MODEL,
          description:
            'reputation_v1 (default) or reputation_v2 (v1 plus COLLUSION_CLUSTER: support circulating inside a group that supports itself counts x0.2)',
        },
      },
    },
    responses: {
      200: {
        description: 'The reputation; score and components are null until the first computation',
        schema: reputationSchema,
      },
    },
    errors: { VALIDATION_FAILED: true, NOT_FOUND: 'unknown agent' },
    handler: async (ctx) => {
      ctx.status = 200;
      ctx.type = 'application/json; charset=utf-8';
      const r = await getReputationBody(
        ctx.deps.db,
        ctx.deps.query,
        ctx.deps.caches,
        ctx.state.params.handle,
        ctx.deps.now(),
        ctx.state.query.explain === true,
        ctx.state.query.model ?? DEFAULT_MODEL,
      );
      // The response cache (src/app.ts) stores the answer with its agent's tag: a rescore of that agent drops it.
      ctx.state.cacheTags = r.tags;
      ctx.body = r.body;
    },
  }),
];
