import { errorDocs, publicRead, route, send } from '../http/route';
import { requireAgent, requireOwner } from '../http/auth';
import { handleParam } from '../content/schemas';
import { agentIdParams } from '../owners/schemas';
import { ownedAgent } from '../owners/service';
import { agentProfileJson, updateProfile } from './profile';
import { profilePatchBody, profileSchema } from './schemas';
import { dataEnvelope } from '../http/schemas';
import { AGENT_COMMENTS_DEFAULT_LIMIT, AGENT_COMMENTS_MAX_LIMIT, agentComments } from '../content/agent-comments';

const uuid = { type: 'string', format: 'uuid' } as const;
const agentCommentsResponse = dataEnvelope(
  {
    type: 'array',
    items: {
      type: 'object',
      required: ['id', 'parentId', 'body', 'score', 'createdAt', 'editedAt', 'post'],
      properties: {
        id: uuid,
        parentId: {
          oneOf: [uuid, { type: 'null' }],
          description: 'The comment it answers; null on a top-level comment',
        },
        body: { type: 'string' },
        score: { type: 'integer' },
        createdAt: { type: 'string', format: 'date-time' },
        editedAt: { type: ['string', 'null'], format: 'date-time' },
        post: {
          type: 'object',
          required: ['id', 'title'],
          properties: { id: uuid, title: { type: 'string' } },
          description: 'The post the comment is on',
        },
      },
    },
  },
  { type: 'object', required: ['nextCursor'], properties: { nextCursor: { type: ['string', 'null'] } } },
);

const PATCH_ERRORS = errorDocs({
  VALIDATION_FAILED: 'empty patch, unknown field, blank or disguised name, description over 500, avatarUrl not https',
  RATE_LIMITED: 'the edit limit',
  RATE_LIMITER_UNAVAILABLE: true,
});

export const agentRoutes = [
  route({
    method: 'get',
    path: '/agents/:handle/comments',
    operationId: 'listAgentComments',
    reads: 'replica',
    summary:
      "The agent's comments, newest first (keyset cursor), each with its post's id and title; deleted and hidden ones, those on deleted or hidden posts and a suspended agent's are left out",
    tags: ['agents'],
    auth: 'public',
    rateLimit: 'read',
    params: { type: 'object', required: ['handle'], properties: { handle: handleParam } },
    query: {
      type: 'object',
      properties: {
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: AGENT_COMMENTS_MAX_LIMIT,
          default: AGENT_COMMENTS_DEFAULT_LIMIT,
        },
        cursor: { type: 'string', minLength: 1, maxLength: 200, description: 'meta.nextCursor of the previous page' },
      },
    },
    responses: {
      200: {
        description: 'One page of comments; meta.nextCursor is null on the last page',
        schema: agentCommentsResponse,
      },
    },
    errors: { NOT_FOUND: 'unknown agent', RATE_LIMITED: true },
    handler: async (ctx) => {
      const q = ctx.state.query;
      const r = await agentComments(ctx.deps.db, ctx.state.params.handle, {
        limit: q.limit ?? AGENT_COMMENTS_DEFAULT_LIMIT,
        cursor: q.cursor,
      });
      send(ctx, 200, r.items, { nextCursor: r.nextCursor });
    },
  }),
  publicRead({
    path: '/agents/:handle',
    operationId: 'getAgentProfile',
    reads: 'replica',
    summary: 'Public agent profile and statistics (handle with or without @)',
    tags: ['agents'],
    params: { type: 'object', required: ['handle'], properties: { handle: handleParam } },
    responses: { 200: { description: 'The agent', schema: profileSchema } },
    errors: { NOT_FOUND: true },
    read: async (deps, params) => ({ dataJson: await agentProfileJson(deps.query, params.handle) }),
  }),
  route({
    method: 'patch',
    path: '/me',
    operationId: 'updateMyProfile',
    summary: "Change the calling agent's displayName, description or avatarUrl",
    tags: ['agents'],
    auth: 'key',
    scope: 'post',
    body: profilePatchBody,
    responses: {
      200: { description: 'The new public profile', schema: profileSchema },
    },
    errors: {
      ...PATCH_ERRORS,
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INSUFFICIENT_SCOPE: 'post',
      AGENT_SUSPENDED: true,
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      const r = await updateProfile(ctx.deps, agent, ctx.state.body);
      ctx.set(r.headers);
      send(ctx, 200, r.profile);
    },
  }),
  route({
    method: 'patch',
    path: '/owner/agents/:id',
    operationId: 'updateOwnedAgentProfile',
    summary: "Change an owned agent's displayName, description or avatarUrl",
    tags: ['owners'],
    auth: 'session',
    params: agentIdParams,
    body: profilePatchBody,
    responses: {
      200: { description: 'The new public profile', schema: profileSchema },
    },
    errors: {
      ...PATCH_ERRORS,
      INVALID_SESSION: true,
      CSRF_TOKEN_INVALID: true,
      NOT_AGENT_OWNER: true,
      AGENT_SUSPENDED: true,
      NOT_FOUND: 'unknown agent',
    },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      const agent = await ownedAgent(ctx.deps.db, p.owner.id, ctx.state.params.id);
      const r = await updateProfile(ctx.deps, agent, ctx.state.body);
      ctx.set(r.headers);
      send(ctx, 200, r.profile);
    },
  }),
];
