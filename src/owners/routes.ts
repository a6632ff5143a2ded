import { errorDocs, route, send } from '../http/route';
import { refuseCrossSite, requireOwner } from '../http/auth';
import { dataEnvelope } from '../http/schemas';
import { csrfTokenFor } from '../identity/authenticate';
import { clearSessionCookie, setSessionCookie } from './cookie';
import {
  createOwnedAgent,
  issueKeyForOwnedAgent,
  listKeys,
  login,
  logout,
  ownerView,
  ownerWithAgents,
  revokeKey,
  signup,
  verifyEmail,
} from './service';
import {
  agentIdParams,
  agentKeyParams,
  apiKeySchema,
  createAgentBody,
  issueKeyBody,
  loginBody,
  managedAgentSchema,
  ownerSchema,
  ownerSessionResponse,
  signupBody,
  tokenBody,
} from './schemas';

const SESSION_ERRORS = errorDocs({
  INVALID_SESSION: 'no valid owner session',
  CSRF_TOKEN_INVALID: 'a session write without a matching X-CSRF-Token',
});
/** Signup and login: a browser form from another site, and the per-address budget. */
const AUTH_ERRORS = errorDocs({
  CROSS_ORIGIN_FORM: 'a browser request from another site',
  RATE_LIMITED:
    'per client address; and within 15 minutes after 10 failed attempts for one account from one address, or 50 from one address',
  RATE_LIMITER_UNAVAILABLE: true,
});
const SESSION_SET = {
  'Set-Cookie': {
    description: 'svc_session: HMAC-SHA256 signed, HttpOnly, SameSite=Lax, 30 days',
    schema: { type: 'string' },
  },
} as const;
/** Routes under /owner/agents/{id}: the agent must be one of the session owner's. */
const OWNED_AGENT_ERRORS = errorDocs({
  INVALID_SESSION: SESSION_ERRORS.INVALID_SESSION,
  NOT_AGENT_OWNER: 'the agent belongs to another owner',
  NOT_FOUND: 'no such agent (or key)',
});
const OWNED_AGENT_WRITE_ERRORS = errorDocs({ ...OWNED_AGENT_ERRORS, CSRF_TOKEN_INVALID: true });

export const ownerRoutes = [
  route({
    method: 'post',
    path: '/owner/signup',
    operationId: 'ownerSignup',
    summary: 'Create an owner account; logs it in (sets svc_session) and queues a verification email',
    tags: ['owners'],
    auth: 'public',
    // Per client address; only signups and logins that succeed count.
    rateLimit: 'auth_ip',
    body: signupBody,
    responses: {
      201: {
        description: 'Owner created and logged in; csrfToken goes in X-CSRF-Token on session writes',
        schema: ownerSessionResponse,
        headers: SESSION_SET,
      },
    },
    errors: { EMAIL_TAKEN: true, ...AUTH_ERRORS },
    handler: async (ctx) => {
      const b = ctx.state.body;
      refuseCrossSite(ctx);
      const { owner, session } = await signup(
        ctx.deps,
        { email: b.email, password: b.password, displayName: b.displayName ?? null },
        ctx.ip,
      );
      setSessionCookie(ctx, session.cookie);
      send(ctx, 201, { owner: ownerView(owner), csrfToken: session.csrfToken });
    },
  }),
  route({
    method: 'post',
    path: '/owner/login',
    operationId: 'ownerLogin',
    summary: 'Log in with email and password; sets svc_session',
    tags: ['owners'],
    auth: 'public',
    // Per client address; only signups and logins that succeed count.
    rateLimit: 'auth_ip',
    body: loginBody,
    responses: {
      200: {
        description: 'Logged in; csrfToken goes in X-CSRF-Token on session writes',
        schema: ownerSessionResponse,
        headers: SESSION_SET,
      },
    },
    errors: { INVALID_CREDENTIALS: 'same answer for an unknown email and a wrong password', ...AUTH_ERRORS },
    handler: async (ctx) => {
      refuseCrossSite(ctx);
      const { owner, session } = await login(ctx.deps, ctx.state.body.email, ctx.state.body.password, ctx.ip);
      setSessionCookie(ctx, session.cookie);
      send(ctx, 200, { owner: ownerView(owner), csrfToken: session.csrfToken });
    },
  }),
  route({
    method: 'post',
    path: '/owner/logout',
    operationId: 'ownerLogout',
    summary: 'Revoke the current session server-side and clear the cookie',
    tags: ['owners'],
    auth: 'session',
    responses: {
      200: {
        description: 'Logged out',
        schema: dataEnvelope({
          type: 'object',
          required: ['loggedOut'],
          properties: { loggedOut: { type: 'boolean' } },
        }),
        headers: { 'Set-Cookie': { description: 'svc_session cleared', schema: { type: 'string' } } },
      },
    },
    errors: SESSION_ERRORS,
    handler: async (ctx) => {
      await logout(ctx.deps, requireOwner(ctx).sessionId);
      clearSessionCookie(ctx);
      send(ctx, 200, { loggedOut: true });
    },
  }),
  route({
    method: 'get',
    path: '/owner/me',
    operationId: 'getOwnerMe',
    summary: 'The logged-in owner, with its agents',
    tags: ['owners'],
    auth: 'session',
    responses: {
      200: {
        description: 'Owner and agents',
        schema: dataEnvelope({
          type: 'object',
          required: ['owner', 'agents', 'csrfToken'],
          properties: {
            owner: {
              ...ownerSchema,
              properties: {
                ...ownerSchema.properties,
                displayName: { type: ['string', 'null'] },
                createdAt: { type: 'string', format: 'date-time' },
              },
            },
            agents: { type: 'array', items: managedAgentSchema },
            csrfToken: { type: 'string' },
          },
        }),
      },
    },
    errors: { INVALID_SESSION: SESSION_ERRORS.INVALID_SESSION },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      const me = await ownerWithAgents(ctx.deps, p.owner.id);
      // A page reloaded after login gets the session's CSRF token back without logging in again.
      ctx.set('Cache-Control', 'no-store');
      send(ctx, 200, { ...me, csrfToken: csrfTokenFor(ctx.deps.config.sessionSecret, p.sessionId) });
    },
  }),
  route({
    method: 'post',
    path: '/owner/email/verify',
    operationId: 'verifyOwnerEmail',
    summary: 'Redeem the email verification token sent at signup',
    tags: ['owners'],
    auth: 'public',
    body: tokenBody,
    responses: {
      200: {
        description: 'Email verified',
        schema: dataEnvelope({ type: 'object', required: ['owner'], properties: { owner: ownerSchema } }),
      },
    },
    errors: { VERIFICATION_TOKEN_NOT_FOUND: true, VERIFICATION_TOKEN_USED: true, VERIFICATION_TOKEN_EXPIRED: true },
    handler: async (ctx) => {
      send(ctx, 200, { owner: await verifyEmail(ctx.deps, ctx.state.body.token) });
    },
  }),
  route({
    method: 'post',
    path: '/owner/agents',
    operationId: 'createOwnedAgent',
    summary: 'Register an agent owned by the logged-in owner',
    tags: ['owners'],
    auth: 'session',
    body: createAgentBody,
    responses: {
      201: { description: 'Agent created', schema: dataEnvelope(managedAgentSchema) },
    },
    errors: { ...SESSION_ERRORS, HANDLE_TAKEN: true },
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      const b = ctx.state.body;
      send(
        ctx,
        201,
        await createOwnedAgent(ctx.deps, p.owner.id, {
          handle: b.handle,
          displayName: b.displayName,
          model: b.model ?? null,
          platform: b.platform ?? null,
        }),
      );
    },
  }),
  route({
    method: 'post',
    path: '/owner/agents/:id/keys',
    operationId: 'issueAgentApiKey',
    summary: 'Issue an API key for an owned agent; the full key is shown this once',
    tags: ['owners'],
    auth: 'session',
    params: agentIdParams,
    body: issueKeyBody,
    responses: {
      201: {
        description: 'Key issued',
        schema: dataEnvelope({
          type: 'object',
          required: ['id', 'key', 'keyPrefix', 'scopes'],
          properties: {
            ...apiKeySchema.properties,
            key: { type: 'string', description: 'svc_live_...; never shown again' },
          },
        }),
      },
    },
    errors: OWNED_AGENT_WRITE_ERRORS,
    handler: async (ctx) => {
      const p = requireOwner(ctx);
      ctx.set('Cache-Control', 'no-store');
      send(
        ctx,
        201,
        await issueKeyForOwnedAgent(
          ctx.deps,
          p.owner.id,
          ctx.state.params.id,
          ctx.state.body.scopes,
          ctx.state.body.label ?? null,
        ),
      );
    },
  }),
  route({
    method: 'get',
    path: '/owner/agents/:id/keys',
    operationId: 'listAgentApiKeys',
    summary: 'List the API keys of an owned agent (prefixes only, never secrets)',
    tags: ['owners'],
    auth: 'session',
    params: agentIdParams,
    responses: {
      200: { description: 'Keys, newest first', schema: dataEnvelope({ type: 'array', items: apiKeySchema }) },
    },
    errors: OWNED_AGENT_ERRORS,
    handler: async (ctx) => {
      send(ctx, 200, await listKeys(ctx.deps, requireOwner(ctx).owner.id, ctx.state.params.id));
    },
  }),
  route({
    method: 'delete',
    path: '/owner/agents/:id/keys/:keyId',
    operationId: 'revokeAgentApiKey',
    summary: 'Revoke an API key of an owned agent (it then gets 401)',
    tags: ['owners'],
    auth: 'session',
    params: agentKeyParams,
    responses: {
      200: { description: 'Key revoked', schema: dataEnvelope(apiKeySchema) },
    },
    errors: OWNED_AGENT_WRITE_ERRORS,
    handler: async (ctx) => {
      send(
        ctx,
        200,
        await revokeKey(ctx.deps, requireOwner(ctx).owner.id, ctx.state.params.id, ctx.state.params.keyId),
      );
    },
  }),
];
