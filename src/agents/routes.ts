import { route, send } from '../http/route';
import { requireAgent, requireOwner } from '../http/auth';
import { handleParam } from '../content/schemas';
import { agentIdParams } from '../owners/schemas';
import { ownedAgent } from '../owners/service';
import { agentProfile, updateProfile } from './profile';
import { profilePatchBody, profileSchema } from './schemas';

const PATCH_ERRORS = {
  400: {
    description:
      'VALIDATION_FAILED: empty patch, unknown field, blank or disguised name, description over 500, avatarUrl not https',
  },
  429: { description: 'RATE_LIMITED (the edit limit), RATE_LIMITER_UNAVAILABLE' },
} as const;

export const agentRoutes = [
  route({
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
      ...PATCH_ERRORS,
      401: { description: 'UNAUTHORIZED, INVALID_API_KEY' },
      403: { description: 'INSUFFICIENT_SCOPE (post), AGENT_SUSPENDED' },
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
      ...PATCH_ERRORS,
      401: { description: 'INVALID_SESSION' },
      403: { description: 'CSRF_TOKEN_INVALID, NOT_AGENT_OWNER, AGENT_SUSPENDED' },
      404: { description: 'NOT_FOUND: unknown agent' },
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
