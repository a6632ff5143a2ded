import crypto from 'crypto';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api, ApiResponse } from '../helpers/api';
import { newAgent, newOwner, TestAgent, TestOwner } from '../helpers/factories';
import { SCOPES } from '../../src/identity/scopes';
import { apiRoutes } from '../../src/routes';
import { fullPath } from '../../src/http/openapi';
import type { RouteDef } from '../../src/http/route';
import {
  buildWorld,
  ensureCommunity,
  pathFor,
  rawRequest,
  realField,
  realParam,
  rowState,
  stateDiff,
  World,
} from '../fuzz/world';

/**
 * Authorization matrix over every non-public route of apiRoutes() × six kinds of wrong
 * credentials. The expectation is derived from the route's auth mode, scope, method and path,
 * so a new route is covered the day it is registered; a route the rules cannot classify fails
 * the suite until a rule names it. Each wrong request must also leave the database untouched.
 */
type Column =
  | 'no credentials'
  | 'revoked key'
  | 'key missing the scope'
  | 'suspended agent'
  | "another owner's session"
  | 'session without CSRF token';
const COLUMNS: Column[] = [
  'no credentials',
  'revoked key',
  'key missing the scope',
  'suspended agent',
  "another owner's session",
  'session without CSRF token',
];

type Expect = { status: number; code?: string; noLeak?: boolean } | { na: string };

const UNSAFE = (r: RouteDef) => r.method !== 'get';
/** Session routes whose effect is on the caller's own data only (no foreign resource to name). */
const OWN_DATA_SESSION_ROUTES: Record<string, string> = {
  'post /owner/logout': "ends the caller's own session",
  'post /owner/agents': 'creates an agent for the caller',
  'post /owner/claim': 'claiming an unowned agent is what any owner may do',
  'post /notifications/read': "marks only the caller's notifications (tested: no foreign row changes)",
};
/** Key routes that act as the key's own agent without naming a resource of someone else. */
const OWN_AGENT_KEY_ROUTES: Record<string, string> = {
  'get /me': 'describes the key itself',
  'get /me/inbox': "lists only the key's own agent's items",
  'get /me/inbox/summary': "counts only the key's own agent's items",
  'post /me/inbox/read': "marks only the key's own agent's items (tested: another agent's stay unread)",
  'post /posts': "publishes as the key's agent",
  'post /posts/:id/comments': "commenting on another agent's post is allowed",
  'get /me/blocks': "lists the key's own agent's blocks",
  'post /conversations': "requests as the key's agent (another agent is whom it asks)",
  'get /conversations': "lists the key's own agent's conversations",
  'patch /me': "changes the key's own agent's profile",
  'get /me/subscriptions': "lists the key's own agent's subscriptions",
};
/** Key routes that name another agent's resource: only its author may act. */
const AUTHOR_ONLY_KEY_ROUTES: Record<string, string> = {
  'delete /posts/:id': 'FORBIDDEN',
  'delete /comments/:id': 'FORBIDDEN',
  'post /agents/:handle/claim-token': 'FORBIDDEN',
  'patch /posts/:id': 'NOT_AUTHOR',
  'patch /comments/:id': 'NOT_AUTHOR',
};

/** Key routes on a conversation: anyone but its two agents gets 404, as if it did not exist. */
const PARTICIPANT_ONLY_KEY_ROUTES = new Set([
  'post /conversations/:id/accept',
  'post /conversations/:id/read',
  'post /conversations/:id/messages',
  'get /conversations/:id/messages',
  'delete /conversations/:id/messages/:messageId',
]);

/** Reports: an agent (key) or an owner (session) reports as itself, naming no acting agent. */
const REPORTER_ROUTES = new Set(['post /posts/:id/report', 'post /comments/:id/report', 'post /agents/:handle/report']);

const id = (r: RouteDef) => `${r.method} ${r.path}`;

function actingField(r: RouteDef): string | undefined {
  return Object.keys((r.body as any)?.properties ?? {}).find((k) => /AgentId$/.test(k));
}

export function expectation(r: RouteDef, col: Column): Expect {
  const s = r.auth;
  switch (col) {
    case 'no credentials':
      return { status: 401, code: s === 'session' ? 'INVALID_SESSION' : 'UNAUTHORIZED' };
    case 'revoked key':
      return { status: 401, code: s === 'session' ? 'INVALID_SESSION' : 'INVALID_API_KEY' };
    case 'key missing the scope':
      if (s === 'session') return { status: 401, code: 'INVALID_SESSION' }; // a key, even with every scope, is no session
      if (!r.scope) return { na: 'the route requires no scope' };
      return { status: 403, code: 'INSUFFICIENT_SCOPE' };
    case 'suspended agent':
      if (s === 'session') return { na: 'session routes act for the owner, not an agent' };
      if (!UNSAFE(r) && PARTICIPANT_ONLY_KEY_ROUTES.has(id(r))) return { status: 404, code: 'NOT_FOUND' };
      return UNSAFE(r) ? { status: 403, code: 'AGENT_SUSPENDED' } : { status: 200 };
    case "another owner's session":
      if (s === 'keyOrSession') {
        if (REPORTER_ROUTES.has(id(r))) return { na: 'any owner may report as itself (its own agents: tested)' };
        if (!actingField(r)) throw new Error(`${id(r)}: keyOrSession route without an *AgentId body field; add a rule`);
        return { status: 403, code: 'NOT_AGENT_OWNER' };
      }
      if (s === 'key') {
        if (AUTHOR_ONLY_KEY_ROUTES[id(r)]) return { status: 403, code: AUTHOR_ONLY_KEY_ROUTES[id(r)] };
        if (PARTICIPANT_ONLY_KEY_ROUTES.has(id(r))) return { status: 404, code: 'NOT_FOUND', noLeak: true };
        if (OWN_AGENT_KEY_ROUTES[id(r)]) return { na: OWN_AGENT_KEY_ROUTES[id(r)] };
        throw new Error(`${id(r)}: key route not classified (author-only or own-agent); add it to a list`);
      }
      // a session acting for an agent it does not own; another owner's connect key is just unknown.
      if (/^\/owner\/agents\/:id/.test(r.path)) return { status: 403, code: 'NOT_AGENT_OWNER' };
      if (/^\/owner\/connect-keys\/:id/.test(r.path)) return { status: 404, code: 'NOT_FOUND' };
      if (!UNSAFE(r)) return { status: 200, noLeak: true };
      if (OWN_DATA_SESSION_ROUTES[id(r)]) return { na: OWN_DATA_SESSION_ROUTES[id(r)] };
      throw new Error(`${id(r)}: session write without an owner resource in its path; classify it`);
    case 'session without CSRF token':
      if (s === 'key') return { na: 'API-key requests need no CSRF token' };
      return UNSAFE(r) ? { status: 403, code: 'CSRF_TOKEN_INVALID' } : { status: 200 };
  }
}

/** The smallest body that passes the route's schema, naming real resources where hinted. */
export function minimalBody(schema: any, hint: (n: string) => unknown, name?: string): unknown {
  if (!schema) return undefined;
  const h = name !== undefined ? hint(name) : undefined;
  if (h !== undefined) return h;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const t = Array.isArray(schema.type) ? schema.type.find((x: string) => x !== 'null') : schema.type;
  switch (t) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const req: string[] = [...(schema.required ?? []), ...(schema.oneOf?.[0]?.required ?? [])];
      for (const [k, s] of Object.entries<any>(schema.properties ?? {})) {
        if (req.includes(k) || hint(k) !== undefined) out[k] = minimalBody(s, hint, k);
      }
      if (schema.minProperties && Object.keys(out).length < schema.minProperties) {
        for (const [k, s] of Object.entries<any>(schema.properties ?? {}))
          if (!(k in out)) out[k] = minimalBody(s, hint, k);
      }
      return out;
    }
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 0) }, () => minimalBody(schema.items, hint));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      if (schema.format === 'uuid') return crypto.randomUUID();
      return 'v'.repeat(Math.max(1, schema.minLength ?? 1));
  }
}

interface Actors {
  w: World;
  intruder: TestOwner;
  revoked: string;
  noScope: Map<string, string>;
  suspended: TestAgent;
}

describe('authz: every non-public route × wrong credentials', function () {
  this.timeout(60_000);
  const routes = apiRoutes().filter((r) => r.auth !== 'public');
  let community: string;
  const counts = { checked: 0, na: 0 };

  before(async () => {
    community = await ensureCommunity();
  });
  after(() =>
    console.log(
      `      authz matrix: ${routes.length} routes × ${COLUMNS.length} columns: ${counts.checked} requests checked, ${counts.na} cells not applicable`,
    ),
  );

  it('every non-public route has an expectation in every column (no route forgotten)', () => {
    expect(routes.length).to.be.greaterThan(10);
    for (const r of routes) for (const c of COLUMNS) expect(() => expectation(r, c), `${id(r)} × ${c}`).not.to.throw();
  });

  it('the matrix rows are exactly the operations the served OpenAPI document secures', async () => {
    const doc = await rawRequest((await getContext()).baseUrl, { method: 'GET', path: '/api/v1/openapi.json' });
    expect(doc.status).to.equal(200);
    // Public: no security requirement, or an empty one among its alternatives.
    const secured = Object.entries<Record<string, any>>(doc.body.paths).flatMap(([p, item]) =>
      Object.entries(item)
        .filter(
          ([, op]) =>
            Array.isArray(op?.security) &&
            op.security.length > 0 &&
            !op.security.some((s: object) => Object.keys(s).length === 0),
        )
        .map(([m]) => `${m} ${p}`),
    );
    expect(routes.map((r) => `${r.method} ${fullPath(r).replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`).sort()).to.deep.equal(
      secured.sort(),
    );
  });

  for (const route of routes) {
    it(`${route.method.toUpperCase()} ${fullPath(route)}`, async () => {
      const { db } = await getContext();
      const w = await buildWorld(community, 1);
      const intruder = await newOwner();
      const intruderAgent = await newAgent({ owner: intruder });
      // A key revoked through the owner API; keys lacking each scope; a suspended agent with every scope.
      const victim = await newAgent({ owner: w.owner });
      const rev = await api(
        'DELETE',
        `/owner/agents/${victim.agent.id}/keys/${(await db('api_keys').where({ agent_id: victim.agent.id }).first('id')).id}`,
        { session: w.owner.session },
      );
      expect(rev.status).to.equal(200);
      const suspended = await newAgent({ owner: w.owner });
      await db('agents').where({ id: suspended.agent.id }).update({ status: 'suspended' });
      await (await getContext()).deps.caches.changed({ kind: 'agents' });
      const a: Actors = { w, intruder, revoked: victim.key, noScope: new Map(), suspended };
      for (const s of SCOPES)
        a.noScope.set(s, (await newAgent({ owner: w.owner, scopes: SCOPES.filter((x) => x !== s) })).key);

      const params = Object.fromEntries(
        [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => [m[1], realParam(route, m[1], w)]),
      );
      const hint = (n: string) => realField(n, w);
      const body = route.body ? minimalBody(route.body, hint) : undefined;
      const path = pathFor(route, params);

      for (const col of COLUMNS) {
        const exp = expectation(route, col);
        if ('na' in exp) {
          counts.na++;
          continue;
        }
        const reqs: { what: string; send: () => Promise<ApiResponse> }[] = [];
        const m = route.method.toUpperCase();
        switch (col) {
          case 'no credentials':
            reqs.push({ what: col, send: () => api(m, path, { body }) });
            break;
          case 'revoked key':
            reqs.push({ what: col, send: () => api(m, path, { body, key: a.revoked }) });
            break;
          case 'key missing the scope':
            reqs.push({
              what: col,
              send: () => api(m, path, { body, key: route.scope ? a.noScope.get(route.scope)! : w.mine[0].key }),
            });
            break;
          case 'suspended agent':
            reqs.push({ what: col, send: () => api(m, path, { body, key: a.suspended.key }) });
            // An owner session acting for its own suspended agent is refused the same way.
            if (route.auth === 'keyOrSession' && UNSAFE(route) && actingField(route)) {
              const sBody = { ...(body as object), [actingField(route)!]: a.suspended.agent.id };
              reqs.push({
                what: `${col} (owner session naming it)`,
                send: () => api(m, path, { body: sBody, session: w.owner.session }),
              });
            }
            break;
          case "another owner's session":
            if (route.auth === 'key')
              reqs.push({
                what: `another agent's key (${intruderAgent.handle})`,
                send: () => api(m, path, { body, key: intruderAgent.key }),
              });
            else reqs.push({ what: col, send: () => api(m, path, { body, session: intruder.session }) });
            break;
          case 'session without CSRF token':
            reqs.push({ what: col, send: () => api(m, path, { body, session: w.owner.session, noCsrf: true }) });
            if (UNSAFE(route))
              reqs.push({
                what: "another session's CSRF token",
                send: () =>
                  api(m, path, {
                    body,
                    session: { cookie: w.owner.session.cookie, csrfToken: intruder.session.csrfToken },
                  }),
              });
            break;
        }
        for (const rq of reqs) {
          const before = await rowState();
          const r = await rq.send();
          const where = `${id(route)} × ${rq.what} → ${r.status} ${r.text.slice(0, 300)}`;
          expect(r.status, where).to.equal(exp.status);
          if (exp.code) expect(r.body?.error?.code, where).to.equal(exp.code);
          if (exp.noLeak) {
            for (const secret of [
              w.owner.owner.id,
              w.owner.owner.email,
              w.mine[0].agent.id,
              w.webhookId,
              w.connectKeyId,
            ].filter(Boolean) as string[]) {
              expect(r.text.includes(secret), `${where}: leaks ${secret}`).to.equal(false);
            }
          }
          expect(stateDiff(before, await rowState()), `${where}: the database changed`).to.equal('');
          counts.checked++;
        }
      }
    });
  }
});
