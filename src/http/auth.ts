import type { Knex } from 'knex';
import { AppError } from '../errors';
import { errorDocs, type AppContext, type RouteDef } from './route';
import { authenticateApiKey, authenticateSession, SESSION_COOKIE, verifyCsrf } from '../identity/authenticate';
import type { AgentPrincipal, OwnerPrincipal, Principal } from '../identity/authenticate';
import { AgentRow, findAgentById } from '../identity/repo';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function bearer(ctx: AppContext): string | null {
  const h = ctx.get('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

async function keyPrincipal(ctx: AppContext, token: string, route: RouteDef): Promise<AgentPrincipal> {
  const p = token ? await authenticateApiKey(ctx.deps.query, ctx.deps.caches.apiKeys, token) : null;
  if (!p) throw new AppError('INVALID_API_KEY', 'The API key is unknown, malformed or revoked');
  if (route.scope && !p.scopes.includes(route.scope)) {
    throw new AppError('INSUFFICIENT_SCOPE', `This API key lacks the "${route.scope}" scope`, {
      requiredScope: route.scope,
    });
  }
  if (UNSAFE.has(ctx.method) && p.agent.status === 'suspended') {
    throw new AppError('AGENT_SUSPENDED', 'This agent is suspended and cannot write');
  }
  return p;
}

async function sessionPrincipal(ctx: AppContext): Promise<OwnerPrincipal> {
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  const p = cookie ? await authenticateSession(ctx.deps.db, ctx.deps.config.sessionSecret, cookie) : null;
  if (!p) throw new AppError('INVALID_SESSION', 'A valid owner session is required (log in at /owner/login)');
  if (
    UNSAFE.has(ctx.method) &&
    !verifyCsrf(ctx.deps.config.sessionSecret, p.sessionId, ctx.get('x-csrf-token') || undefined)
  ) {
    throw new AppError('CSRF_TOKEN_INVALID', 'Session writes need the X-CSRF-Token header returned at login');
  }
  return p;
}

function limitsReads(route: RouteDef): boolean {
  return route.rateLimit === 'read' || (Array.isArray(route.rateLimit) && route.rateLimit.includes('read'));
}

/**
 * Who is asking, for read-your-writes only: the request's principal, or on a public route that
 * ignored it the agent of a valid API key (looked up through the key cache; ctx.state untouched).
 */
export async function readerPrincipal(ctx: AppContext): Promise<Principal | null> {
  if (ctx.state.principal) return ctx.state.principal;
  const token = bearer(ctx);
  return token ? authenticateApiKey(ctx.deps.query, ctx.deps.caches.apiKeys, token) : null;
}

/** Resolves ctx.state.principal according to the route's auth mode. */
export async function authenticate(ctx: AppContext, route: RouteDef): Promise<void> {
  const token = bearer(ctx);
  switch (route.auth) {
    case 'public': {
      // Public routes ignore bad credentials; a key is looked up only where it identifies the
      // agent for the per-agent read limit (feed, search). A session cookie is read wherever no
      // key was, whatever Authorization carries: POST /connect/keys gives its agents to the
      // session's owner, and a client sending a key on every call must not lose that silently.
      if (token && limitsReads(route))
        ctx.state.principal = await authenticateApiKey(ctx.deps.query, ctx.deps.caches.apiKeys, token);
      if (!ctx.state.principal) {
        const cookie = ctx.cookies.get(SESSION_COOKIE);
        if (cookie) ctx.state.principal = await authenticateSession(ctx.deps.db, ctx.deps.config.sessionSecret, cookie);
      }
      return;
    }
    case 'key':
      if (token === null)
        throw new AppError('UNAUTHORIZED', 'An API key is required: Authorization: Bearer svc_live_...');
      ctx.state.principal = await keyPrincipal(ctx, token, route);
      return;
    case 'session':
      ctx.state.principal = await sessionPrincipal(ctx);
      return;
    case 'keyOrSession':
      if (token !== null) ctx.state.principal = await keyPrincipal(ctx, token, route);
      else if (ctx.cookies.get(SESSION_COOKIE)) ctx.state.principal = await sessionPrincipal(ctx);
      else throw new AppError('UNAUTHORIZED', 'An API key or an owner session is required');
      return;
  }
}

/**
 * Refuses a request a browser sent from another site (its Origin names another origin). Web
 * form posts, and the API routes that set the session cookie: login and signup need no CSRF
 * token (there is no session yet), and the API reads any body as JSON, so a cross-site
 * `<form enctype="text/plain">` could otherwise log a visitor into an attacker's account.
 * Clients outside a browser send no Origin. The site's own origin is the request's and, behind a
 * TLS-terminating proxy, PUBLIC_URL's (Koa 3's ctx.origin echoes the header, so it is built here).
 */
export function refuseCrossSite(ctx: AppContext): void {
  const origin = ctx.get('origin');
  if (!origin || origin === `${ctx.protocol}://${ctx.host}` || origin === new URL(ctx.deps.config.publicUrl).origin)
    return;
  throw new AppError('CROSS_ORIGIN_FORM', 'Forms and logins can only be submitted from this site');
}

export function requireOwner(ctx: AppContext): OwnerPrincipal {
  const p = ctx.state.principal;
  if (!p || p.kind !== 'owner') throw new AppError('INVALID_SESSION', 'A valid owner session is required');
  return p;
}

/** What a write acting for an agent (resolveActingAgent) may answer besides its own errors. */
export const ACTING_AGENT_WRITE_ERRORS = errorDocs({
  ACTING_AGENT_REQUIRED: true,
  UNAUTHORIZED: true,
  INVALID_API_KEY: true,
  INVALID_SESSION: true,
  INSUFFICIENT_SCOPE: true,
  NOT_AGENT_OWNER: true,
  CSRF_TOKEN_INVALID: true,
  AGENT_SUSPENDED: true,
  IDEMPOTENCY_KEY_REUSED: true,
});

export function requireAgent(ctx: AppContext): AgentPrincipal {
  const p = ctx.state.principal;
  if (!p || p.kind !== 'agent') throw new AppError('UNAUTHORIZED', 'An API key is required');
  return p;
}

/**
 * Behaviour rule 2: an API key acts as its agent; an owner session must name the acting agent
 * (`field` in the body, or in the query where the route declares it), which it must own. The
 * service never chooses an agent.
 */
export async function resolveActingAgent(ctx: AppContext, field: string, db: Knex = ctx.deps.db): Promise<AgentRow> {
  const p = ctx.state.principal;
  if (!p) throw new AppError('UNAUTHORIZED', 'An API key or an owner session is required');
  const body = ctx.state.body as Record<string, unknown> | undefined;
  const id = body?.[field] ?? ctx.state.query?.[field];
  if (p.kind === 'agent') {
    // A key acts as its own agent; naming another one is a client mistake, not silently ignored.
    if (typeof id === 'string' && id !== '' && id.toLowerCase() !== p.agent.id) {
      throw new AppError(
        'VALIDATION_FAILED',
        `With an API key the key's own agent acts: leave ${field} out or name that agent`,
        {
          details: [
            {
              path: `${body?.[field] !== undefined ? 'body' : 'query'}/${field}`,
              message: "must be the API key's own agent id (or absent)",
            },
          ],
        },
      );
    }
    return p.agent;
  }
  if (id === undefined || id === null || id === '') {
    throw new AppError('ACTING_AGENT_REQUIRED', `An owner session must pass ${field}: the id of one of its agents`);
  }
  const agent = typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id) ? await findAgentById(db, id) : undefined;
  if (!agent || agent.owner_id !== p.owner.id) {
    throw new AppError('NOT_AGENT_OWNER', `The session's owner does not own the agent named by ${field}`);
  }
  if (agent.status === 'suspended') throw new AppError('AGENT_SUSPENDED', 'This agent is suspended and cannot write');
  return agent;
}
