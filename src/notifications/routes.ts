import { route, send } from '../http/route';
import { requireOwner } from '../http/auth';
import { AppError } from '../errors';
import { dataEnvelope } from '../http/schemas';
import { decodeCursor, listNotifications, markRead } from './service';

const itemSchema = {
  type: 'object',
  required: ['id', 'type', 'href', 'data', 'readAt', 'createdAt'],
  properties: {
    id: { type: 'string' },
    type: {
      type: 'string',
      enum: [
        'leaderboard_top10',
        'leaderboard_rank1',
        'leaderboard_weekly_result',
        'reputation_milestone',
        'webhook_disabled',
      ],
    },
    href: { type: 'string', description: 'Site-relative path' },
    data: {
      type: 'object',
      required: ['category', 'week', 'rank', 'handle'],
      properties: {
        category: { type: ['string', 'null'] },
        week: { type: ['string', 'null'] },
        rank: { type: ['integer', 'null'] },
        handle: { type: ['string', 'null'] },
      },
    },
    readAt: { type: ['string', 'null'], format: 'date-time' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

const listQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 50, default: 50 },
    cursor: { type: 'string', maxLength: 200 },
  },
} as const;

const readBody = {
  type: 'object',
  additionalProperties: false,
  description: 'Either ids (non-empty) or all: true',
  properties: {
    ids: { type: 'array', minItems: 1, maxItems: 500, items: { type: 'string', maxLength: 100 } },
    all: { type: 'boolean', const: true },
  },
  oneOf: [{ required: ['ids'] }, { required: ['all'] }],
} as const;

export const notificationRoutes = [
  route({
    method: 'get',
    path: '/notifications',
    operationId: 'listNotifications',
    summary: "The logged-in owner's notifications, newest first, with the unread count",
    tags: ['notifications'],
    auth: 'session',
    query: listQuery,
    responses: {
      200: {
        description: 'unreadCount and one page of items; meta.nextCursor is null on the last page',
        schema: dataEnvelope(
          {
            type: 'object',
            required: ['unreadCount', 'items'],
            properties: { unreadCount: { type: 'integer' }, items: { type: 'array', items: itemSchema } },
          },
          { type: 'object', properties: { nextCursor: { type: ['string', 'null'] } } },
        ),
      },
    },
    errors: { VALIDATION_FAILED: 'limit out of 1..50, malformed cursor', INVALID_SESSION: true },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      const { limit, cursor } = ctx.state.query as { limit: number; cursor?: string };
      const c = cursor === undefined ? null : decodeCursor(cursor);
      if (cursor !== undefined && !c)
        throw new AppError('VALIDATION_FAILED', 'Request query is invalid', {
          details: [{ path: 'query/cursor', message: 'is not a valid cursor' }],
        });
      const r = await listNotifications(ctx.deps.db, p.owner.id, { limit, cursor: c });
      send(ctx, 200, { unreadCount: r.unreadCount, items: r.items }, { nextCursor: r.nextCursor });
    },
  }),
  route({
    method: 'post',
    path: '/notifications/read',
    operationId: 'markNotificationsRead',
    summary: "Marks the caller's own notifications read: {ids:[...]} or {all:true}",
    tags: ['notifications'],
    auth: 'session',
    body: readBody,
    responses: {
      200: {
        description: "marked counts only the caller's notifications that were unread; other ids are ignored",
        schema: dataEnvelope({
          type: 'object',
          required: ['marked', 'unreadCount'],
          properties: { marked: { type: 'integer' }, unreadCount: { type: 'integer' } },
        }),
      },
    },
    errors: {
      VALIDATION_FAILED: 'empty ids, neither ids nor all',
      INVALID_SESSION: true,
      CSRF_TOKEN_INVALID: true,
    },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      const r = await markRead(ctx.deps.db, p.owner.id, ctx.state.body, ctx.deps.now());
      send(ctx, 200, r);
    },
  }),
];
