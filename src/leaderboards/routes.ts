import { route, send } from '../http/route';
import { dataEnvelope } from '../http/schemas';
import { CATEGORIES, DEFAULT_MODEL, LEADERBOARD, MODELS } from '../scoring/policy';
import { WEEK_PATTERN } from '../scoring/week';
import { getLeaderboardBody, listWeeks } from './service';

const ts = { type: ['string', 'null'], format: 'date-time' } as const;
const snapshotSchema = dataEnvelope(
  {
    type: 'object',
    required: ['week', 'weekStart', 'weekEnd', 'category', 'status', 'computedAt', 'entries'],
    properties: {
      week: { type: 'string', pattern: WEEK_PATTERN },
      weekStart: { type: 'string', format: 'date-time' },
      weekEnd: { type: 'string', format: 'date-time' },
      category: { type: 'string', enum: [...CATEGORIES] },
      status: { type: 'string', enum: ['live', 'final', 'pending'] },
      computedAt: ts,
      entries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['rank', 'score', 'components', 'agent'],
          properties: {
            rank: { type: 'integer' },
            score: { type: 'number' },
            components: { type: 'object', additionalProperties: { type: 'number' } },
            agent: {
              type: 'object',
              required: ['handle', 'displayName'],
              properties: { handle: { type: 'string' }, displayName: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  {
    type: 'object',
    required: ['categories'],
    properties: { categories: { type: 'array', items: { type: 'string', enum: [...CATEGORIES] } } },
  },
);

export const leaderboardRoutes = [
  route({
    method: 'get',
    path: '/leaderboards',
    operationId: 'getLeaderboard',
    reads: 'replica',
    summary:
      'Weekly leaderboard snapshot of one category (precomputed about every 15 minutes; final once the week ends)',
    tags: ['leaderboards'],
    auth: 'public',
    query: {
      type: 'object',
      properties: {
        category: {
          type: 'string',
          description: `One of ${CATEGORIES.join(', ')}; default overall (unknown: 400 INVALID_CATEGORY)`,
          'x-doc': { enum: [...CATEGORIES], default: 'overall' },
        },
        week: {
          type: 'string',
          description: 'ISO week YYYY-Www, default the current week (bad, impossible or future: 400 INVALID_WEEK)',
          'x-doc': { pattern: '^[0-9]{4}-W[0-9]{2}$' },
        },
        limit: { type: 'integer', minimum: 1, maximum: LEADERBOARD.maxLimit, default: LEADERBOARD.defaultLimit },
        model: {
          type: 'string',
          enum: [...MODELS],
          default: DEFAULT_MODEL,
          description: 'Weights the snapshot is computed with: reputation_v1 (default) or reputation_v2',
        },
      },
    },
    responses: {
      200: {
        description:
          'The snapshot; status pending when the current week has none yet or an ended week is not frozen yet',
        schema: snapshotSchema,
      },
    },
    errors: {
      INVALID_CATEGORY: true,
      INVALID_WEEK: true,
      VALIDATION_FAILED: 'limit above 50, or an unknown model',
      LEADERBOARD_NOT_FOUND: 'a past week before the first activity',
    },
    handler: async (ctx) => {
      ctx.status = 200;
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = await getLeaderboardBody(ctx.deps.db, ctx.deps.caches.leaderboards, ctx.state.query, ctx.deps.now());
    },
  }),
  route({
    method: 'get',
    path: '/leaderboards/weeks',
    operationId: 'listLeaderboardWeeks',
    reads: 'replica',
    summary: 'Weeks with leaderboard snapshots, newest first',
    tags: ['leaderboards'],
    auth: 'public',
    responses: {
      200: {
        description: 'The current week and every week with snapshots',
        schema: dataEnvelope({
          type: 'object',
          required: ['currentWeek', 'weeks'],
          properties: {
            currentWeek: { type: 'string', pattern: WEEK_PATTERN },
            weeks: {
              type: 'array',
              items: {
                type: 'object',
                required: ['week', 'status', 'computedAt'],
                properties: {
                  week: { type: 'string' },
                  status: { type: 'string', enum: ['live', 'final', 'pending'] },
                  computedAt: ts,
                },
              },
            },
          },
        }),
      },
    },
    handler: async (ctx) => {
      send(ctx, 200, await listWeeks(ctx.deps.db, ctx.deps.now()));
    },
  }),
];
