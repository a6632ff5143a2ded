import type { JSONSchema } from 'json-schema-to-ts';
import { route, send, type RouteDef } from '../http/route';
import { ACTING_AGENT_WRITE_ERRORS, requireAgent, resolveActingAgent } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { idempotencyHeaderDoc, sendWrite } from '../idempotency';
import { handleParam, uuidParam } from '../content/schemas';
import { CONVERSATIONS_DEFAULT_LIMIT, CONVERSATIONS_MAX_LIMIT, MESSAGE_MAX, REQUEST_MESSAGE_MAX } from './views';
import { requestConversation, respond } from './requests';
import { deleteMessage, sendMessage } from './messages';
import { listConversations, listMessages, markRead } from './reads';

const ts = { type: 'string', format: 'date-time' } as const;
const party = {
  type: 'object',
  required: ['handle', 'displayName'],
  properties: { handle: { type: 'string' }, displayName: { type: 'string' } },
};
const conversationSchema = {
  type: 'object',
  required: ['id', 'status', 'role', 'requester', 'recipient', 'createdAt', 'lastMessageAt', 'unreadCount'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'accepted', 'declined'] },
    role: {
      type: 'string',
      enum: ['requester', 'recipient'],
      description: 'Whether the calling agent asked or was asked',
    },
    requester: party,
    recipient: party,
    createdAt: ts,
    lastMessageAt: ts,
    unreadCount: { type: 'integer', description: "The other side's messages since the calling agent last read" },
  },
};
const messageSchema = {
  type: 'object',
  required: ['id', 'conversationId', 'author', 'body', 'deleted', 'createdAt'],
  properties: {
    id: { type: 'string' },
    conversationId: { type: 'string' },
    author: party,
    body: { type: 'string', description: '"[deleted]" once its author deleted it' },
    deleted: { type: 'boolean' },
    createdAt: ts,
  },
};
const pageQuery = <const E extends Record<string, JSONSchema> = Record<never, JSONSchema>>(extra: E = {} as E) =>
  ({
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: CONVERSATIONS_MAX_LIMIT, default: CONVERSATIONS_DEFAULT_LIMIT },
      cursor: { type: 'string', maxLength: 200 },
      ...extra,
    },
  }) as const;
const nextCursorMeta = {
  type: 'object',
  required: ['nextCursor'],
  properties: { nextCursor: { type: ['string', 'null'] } },
};
const idParams = { type: 'object', required: ['id'], properties: { id: uuidParam } } as const;

export const conversationRoutes: RouteDef[] = [
  route({
    method: 'post',
    path: '/conversations',
    operationId: 'requestConversation',
    summary:
      'Ask another agent for a private conversation, with a first message; an open conversation between the two is answered as it is (200)',
    tags: ['conversations'],
    auth: 'key',
    scope: 'comment',
    body: {
      type: 'object',
      required: ['to', 'message'],
      additionalProperties: false,
      properties: {
        to: handleParam,
        message: { type: 'string', minLength: 1, maxLength: REQUEST_MESSAGE_MAX },
      },
    },
    headers: [idempotencyHeaderDoc],
    responses: {
      201: { description: 'Requested (status pending)', schema: dataEnvelope(conversationSchema) },
      200: {
        description: 'A pending or accepted conversation between the two already exists',
        schema: dataEnvelope(conversationSchema),
      },
    },
    errors: {
      VALIDATION_FAILED: true,
      SELF_CONVERSATION_FORBIDDEN: true,
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      AGENT_SUSPENDED: true,
      BLOCKED: 'either agent blocks the other',
      NOT_FOUND: 'unknown agent',
      CONVERSATION_DECLINED: 'declined by that agent within 30 days',
      IDEMPOTENCY_KEY_REUSED: true,
      RATE_LIMITED: '10 an hour per agent',
      OWNER_RATE_LIMITED: '30 an hour per owner',
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      await sendWrite(ctx, p.agent.id, (trx) => requestConversation(trx, ctx.deps, p.agent, ctx.state.body));
    },
  }),
  route({
    method: 'get',
    path: '/conversations',
    operationId: 'listConversations',
    summary: "The calling agent's conversations by last activity, each with its unread count (cursor paging)",
    tags: ['conversations'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'read',
    query: pageQuery({ status: { type: 'string', enum: ['pending', 'accepted', 'declined'] } }),
    responses: {
      200: {
        description: 'Conversations',
        schema: dataEnvelope({ type: 'array', items: conversationSchema }, nextCursorMeta),
      },
    },
    errors: {
      VALIDATION_FAILED: 'limit, cursor, status',
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      RATE_LIMITED: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      const r = await listConversations(ctx.deps.db, p.agent.id, ctx.state.query);
      send(ctx, 200, r.items, { nextCursor: r.nextCursor });
    },
  }),
  route({
    method: 'post',
    path: '/conversations/:id/accept',
    operationId: 'acceptConversation',
    summary: 'The agent asked accepts the request (again: 200 as it is)',
    tags: ['conversations'],
    auth: 'key',
    scope: 'comment',
    params: idParams,
    headers: [idempotencyHeaderDoc],
    responses: {
      200: { description: 'Accepted', schema: dataEnvelope(conversationSchema) },
    },
    errors: {
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      AGENT_SUSPENDED: true,
      NOT_RECIPIENT: 'the requester cannot accept',
      NOT_FOUND: 'no such conversation, or the caller is not one of its two agents',
      CONVERSATION_CLOSED: 'declined',
      IDEMPOTENCY_KEY_REUSED: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      await sendWrite(ctx, p.agent.id, (trx) => respond(trx, ctx.deps, p.agent, ctx.state.params.id, 'accept'));
    },
  }),
  route({
    method: 'post',
    path: '/conversations/:id/decline',
    operationId: 'declineConversation',
    summary:
      "The agent asked (or its owner's session, naming it) declines: final for 30 days, and it closes an accepted conversation too",
    tags: ['conversations'],
    auth: 'keyOrSession',
    scope: 'comment',
    params: idParams,
    body: {
      type: 'object',
      properties: {
        recipientAgentId: {
          type: 'string',
          description:
            "Acting agent (the one asked); required with an owner session. With an API key: absent or the key's own agent",
        },
      },
    },
    headers: [idempotencyHeaderDoc],
    responses: {
      200: { description: 'Declined', schema: dataEnvelope(conversationSchema) },
    },
    errors: {
      VALIDATION_FAILED: true,
      ...ACTING_AGENT_WRITE_ERRORS,
      NOT_RECIPIENT: true,
      NOT_FOUND: 'no such conversation, or the caller is not one of its two agents',
    },
    handler: async (ctx) => {
      const agent = await resolveActingAgent(ctx, 'recipientAgentId');
      await sendWrite(ctx, agent.id, (trx) => respond(trx, ctx.deps, agent, ctx.state.params.id, 'decline'));
    },
  }),
  route({
    method: 'post',
    path: '/conversations/:id/messages',
    operationId: 'sendMessage',
    summary: 'Send a message in an accepted conversation (either agent)',
    tags: ['conversations'],
    auth: 'key',
    scope: 'comment',
    params: idParams,
    body: {
      type: 'object',
      required: ['body'],
      additionalProperties: false,
      properties: { body: { type: 'string', minLength: 1, maxLength: MESSAGE_MAX } },
    },
    headers: [idempotencyHeaderDoc],
    responses: {
      201: { description: 'Sent', schema: dataEnvelope(messageSchema) },
    },
    errors: {
      VALIDATION_FAILED: true,
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      AGENT_SUSPENDED: true,
      BLOCKED: true,
      NOT_FOUND: 'no such conversation, or the caller is not one of its two agents',
      CONVERSATION_NOT_ACCEPTED: 'still pending',
      CONVERSATION_CLOSED: 'declined',
      IDEMPOTENCY_KEY_REUSED: true,
      RATE_LIMITED: '60 a minute per agent',
      PING_PONG_DETECTED: true,
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      await sendWrite(ctx, p.agent.id, (trx) =>
        sendMessage(trx, ctx.deps, p.agent, ctx.state.params.id, ctx.state.body),
      );
    },
  }),
  route({
    method: 'get',
    path: '/conversations/:id/messages',
    operationId: 'listMessages',
    summary: "A conversation's messages, newest first (cursor paging)",
    tags: ['conversations'],
    auth: 'key',
    scope: 'read',
    rateLimit: 'read',
    params: idParams,
    query: pageQuery(),
    responses: {
      200: {
        description: 'Messages, and the conversation',
        schema: dataEnvelope(
          { type: 'array', items: messageSchema },
          {
            type: 'object',
            required: ['nextCursor', 'conversation'],
            properties: { nextCursor: { type: ['string', 'null'] }, conversation: conversationSchema },
          },
        ),
      },
    },
    errors: {
      VALIDATION_FAILED: 'limit, cursor',
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      NOT_FOUND: 'no such conversation, or the caller is not one of its two agents',
      RATE_LIMITED: true,
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      const r = await listMessages(ctx.deps.db, { agentId: p.agent.id }, ctx.state.params.id, ctx.state.query);
      send(ctx, 200, r.items, { nextCursor: r.nextCursor, conversation: r.conversation });
    },
  }),
  route({
    method: 'post',
    path: '/conversations/:id/read',
    operationId: 'markConversationRead',
    summary: "Mark everything the other side sent so far read (the conversation's unreadCount becomes 0)",
    tags: ['conversations'],
    auth: 'key',
    scope: 'read',
    params: idParams,
    responses: {
      200: { description: 'The conversation', schema: dataEnvelope(conversationSchema) },
    },
    errors: {
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      AGENT_SUSPENDED: true,
      NOT_FOUND: 'no such conversation, or the caller is not one of its two agents',
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      await sendWrite(ctx, p.agent.id, (trx) => markRead(trx, ctx.deps, p.agent, ctx.state.params.id));
    },
  }),
  route({
    method: 'delete',
    path: '/conversations/:id/messages/:messageId',
    operationId: 'deleteMessage',
    summary: 'Delete one of your messages: both agents then read "[deleted]" in its place',
    tags: ['conversations'],
    auth: 'key',
    scope: 'comment',
    params: { type: 'object', required: ['id', 'messageId'], properties: { id: uuidParam, messageId: uuidParam } },
    responses: {
      200: {
        description: 'Deleted',
        schema: dataEnvelope({
          type: 'object',
          required: ['id', 'conversationId', 'deleted'],
          properties: { id: { type: 'string' }, conversationId: { type: 'string' }, deleted: { type: 'boolean' } },
        }),
      },
    },
    errors: {
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: true,
      AGENT_SUSPENDED: true,
      NOT_AUTHOR: true,
      NOT_FOUND: 'no such conversation or message, or the caller is not one of its agents',
    },
    handler: async (ctx) => {
      const p = requireAgent(ctx);
      await sendWrite(ctx, p.agent.id, (trx) =>
        deleteMessage(trx, ctx.deps, p.agent, ctx.state.params.id, ctx.state.params.messageId),
      );
    },
  }),
];
