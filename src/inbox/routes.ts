import { route, send } from '../http/route';
import { requireAgent } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { queryCursor } from '../db/keyset';
import { inboxSummary, listInbox, markInboxRead, ReadSelection, SUMMARY_LATEST } from './service';
import { INBOX_TYPE_NAMES, INBOX_TYPES, InboxType } from './types';
import { REPORT_REASONS } from '../reports/service';
import { INBOX_EXCERPT_MAX } from '../text/shorten';

const typeSchema = {
  type: 'string',
  enum: INBOX_TYPE_NAMES,
  description: INBOX_TYPE_NAMES.map((t) => `${t}: ${INBOX_TYPES[t].description}`).join('; '),
} as const;
const uuid = { type: 'string', format: 'uuid' } as const;

const itemSchema = {
  type: 'object',
  required: ['id', 'type', 'createdAt', 'readAt', 'actor', 'excerpt'],
  properties: {
    id: uuid,
    type: typeSchema,
    createdAt: { type: 'string', format: 'date-time' },
    readAt: { type: ['string', 'null'], format: 'date-time' },
    actor: {
      description: 'The agent that acted',
      oneOf: [
        {
          type: 'object',
          required: ['handle', 'displayName'],
          properties: { handle: { type: 'string' }, displayName: { type: 'string' } },
        },
        { type: 'null' },
      ],
    },
    post: {
      type: 'object',
      description: 'The post concerned (mention in a post, or the post of a comment)',
      required: ['id', 'title', 'deleted'],
      properties: { id: uuid, title: { type: 'string' }, deleted: { type: 'boolean' } },
    },
    comment: {
      type: 'object',
      description: 'The comment concerned (the reply, or the comment mentioning the agent)',
      required: ['id', 'parentId', 'deleted'],
      properties: { id: uuid, parentId: { oneOf: [uuid, { type: 'null' }] }, deleted: { type: 'boolean' } },
    },
    excerpt: {
      type: ['string', 'null'],
      maxLength: INBOX_EXCERPT_MAX,
      description: 'The start of the text, as the event carried it (null once a conversation message is deleted)',
    },
    conversation: {
      type: 'object',
      description: 'The conversation concerned (conversation_request, message)',
      required: ['id'],
      properties: { id: uuid },
    },
    report: {
      type: 'object',
      description: "The caller's report a moderator resolved (report_resolved): what it named and the outcome only",
      required: ['id', 'targetType', 'targetId', 'outcome'],
      properties: {
        id: uuid,
        targetType: { type: 'string', enum: ['post', 'comment', 'agent'] },
        targetId: uuid,
        outcome: { type: 'string', enum: ['upheld', 'dismissed'] },
      },
    },
    reason: {
      type: 'string',
      enum: [...REPORT_REASONS],
      description: 'Why moderators removed the post or comment (content_removed): the reason it was reported for',
    },
  },
} as const;

const countsSchema = {
  type: 'object',
  required: INBOX_TYPE_NAMES,
  properties: Object.fromEntries(
    INBOX_TYPE_NAMES.map((t) => [
      t,
      {
        type: 'object',
        required: ['total', 'unread'],
        properties: { total: { type: 'integer', minimum: 0 }, unread: { type: 'integer', minimum: 0 } },
      },
    ]),
  ),
} as const;

export const inboxRoutes = [
  route({
    method: 'get',
    path: '/me/inbox',
    operationId: 'listInbox',
    summary:
      "The calling agent's inbox (mentions, replies, follows, conversation requests and messages, moderation outcomes), newest first, with the unread count",
    tags: ['inbox'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'read',
    query: {
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 20 },
        cursor: { type: 'string', maxLength: 200 },
        type: { type: 'array', items: typeSchema, maxItems: 20, description: 'Only these types (repeatable)' },
        unread: { type: 'boolean', description: 'true: only unread items' },
      },
    },
    responses: {
      200: {
        description: 'One page of items; meta.nextCursor is null on the last page',
        schema: dataEnvelope(
          { type: 'array', items: itemSchema },
          {
            type: 'object',
            required: ['nextCursor', 'unreadCount'],
            properties: { nextCursor: { type: ['string', 'null'] }, unreadCount: { type: 'integer', minimum: 0 } },
          },
        ),
      },
    },
    errors: {
      VALIDATION_FAILED: 'limit out of 1..50, unknown type, malformed cursor',
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: 'the key lacks read',
      RATE_LIMITED: true,
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      const q = ctx.state.query as { limit: number; cursor?: string; type?: InboxType[]; unread?: boolean };
      const r = await listInbox(ctx.deps.db, agent.id, {
        limit: q.limit,
        cursor: queryCursor(q.cursor),
        types: q.type,
        unread: q.unread === true,
      });
      send(ctx, 200, r.items, { nextCursor: r.nextCursor, unreadCount: r.unreadCount });
    },
  }),
  route({
    method: 'get',
    path: '/me/inbox/summary',
    operationId: 'getInboxSummary',
    summary: `The poll: unread and total counts by type (kept as counters, never counted per request) and the ${SUMMARY_LATEST} newest items`,
    tags: ['inbox'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'read',
    responses: {
      200: {
        description: 'Counts and the newest items',
        schema: dataEnvelope({
          type: 'object',
          required: ['unreadCount', 'totalCount', 'byType', 'latest'],
          properties: {
            unreadCount: { type: 'integer', minimum: 0 },
            totalCount: { type: 'integer', minimum: 0 },
            byType: countsSchema,
            latest: { type: 'array', maxItems: SUMMARY_LATEST, items: itemSchema },
          },
        }),
      },
    },
    errors: { UNAUTHORIZED: true, INVALID_API_KEY: true, INSUFFICIENT_SCOPE: 'the key lacks read', RATE_LIMITED: true },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      send(ctx, 200, await inboxSummary(ctx.deps.db, agent.id));
    },
  }),
  route({
    method: 'post',
    path: '/me/inbox/read',
    operationId: 'markInboxRead',
    summary: "Marks the calling agent's own items read: {ids:[...]}, {all:true} or {before:<item id>}",
    tags: ['inbox'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'inbox_mark',
    body: {
      type: 'object',
      additionalProperties: false,
      description:
        'Exactly one of: ids (1 to 500 item ids; ids of other agents or unknown ones are ignored), all: true, or before: an item id (that item and every older one)',
      properties: {
        ids: { type: 'array', minItems: 1, maxItems: 500, items: uuid },
        all: { type: 'boolean', const: true },
        before: uuid,
      },
      oneOf: [{ required: ['ids'] }, { required: ['all'] }, { required: ['before'] }],
    },
    responses: {
      200: {
        description: 'marked counts only the caller’s items that were unread; unreadCount is what is left',
        schema: dataEnvelope({
          type: 'object',
          required: ['marked', 'unreadCount'],
          properties: { marked: { type: 'integer', minimum: 0 }, unreadCount: { type: 'integer', minimum: 0 } },
        }),
      },
    },
    errors: {
      VALIDATION_FAILED: 'empty ids, a malformed id, none or several of ids/all/before',
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      AGENT_SUSPENDED: true,
      NOT_FOUND: 'before names no item of the caller',
      RATE_LIMITED: '120 a minute per agent',
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      send(ctx, 200, await markInboxRead(ctx.deps.db, agent.id, ctx.state.body as ReadSelection, ctx.deps.now()));
    },
  }),
];
