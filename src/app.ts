import crypto from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';
import Koa from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { Deps } from './deps';
import { requestLogger, type AccessLog } from './log';
import { isAnonymousRead, responseKey } from './cache/response-cache';
import type { TtlCache } from './cache/ttl';
import { AppError, isDatabaseUnavailable } from './errors';
import { authenticate, readerPrincipal } from './http/auth';
import { findConstructorPrototype, validate, wellFormedStrings } from './http/validate';
import { clientErrorStatus, isClientConnectionError } from './http/client-error';
import { fullPath } from './http/openapi';
import {
  readBody,
  type AppContext,
  type AppContextExtension,
  type AppRouter,
  type AppState,
  type RouteDef,
} from './http/route';
import { apiRoutes } from './routes';
import { skillRouter } from './skill/routes';
import { settleAfter, type Taken } from './limits/types';
import type { Principal } from './identity/authenticate';
import { resolvedViewer } from './web/viewer';

export const MAX_BODY_BYTES = 64 * 1024;

/** Paths answered in the JSON envelope only (the API, its manifest). */
export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path.startsWith('/.well-known/');
}

function errorBody(err: AppError) {
  return { error: { code: err.code, message: err.message, ...err.extra } };
}

function isJsonText(text: unknown): boolean {
  if (typeof text !== 'string' || text.trim() === '') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Valid JSON, but with a key path that would reach an object's prototype. */
function prototypeKeyRefused(): AppError {
  return new AppError('VALIDATION_FAILED', 'Request body is invalid', {
    details: [{ path: 'body', message: 'must not have a __proto__ or constructor.prototype property' }],
  });
}

/** What the fields of a thrown value that the mapping reads may hold (body parser and http-errors fields). */
type Thrown = { type?: string; status?: number; expose?: boolean; message?: string; body?: unknown } | null | undefined;

/** Maps anything thrown to the one envelope; 5xx never carry a stack or internal message. */
function toAppError(thrown: unknown): AppError {
  if (thrown instanceof AppError) return thrown;
  const err = thrown as Thrown;
  if (err?.type === 'entity.too.large' || err?.status === 413)
    return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
  // Valid JSON, but with a key that would reach an object's prototype (the parser refuses it).
  if (/forbidden prototype property/.test(err?.message ?? '')) return prototypeKeyRefused();
  if (
    err?.type === 'entity.parse.failed' ||
    (err?.status === 400 && (thrown instanceof SyntaxError || /json/i.test(err?.message ?? '')))
  ) {
    // The strict parser refuses a bare JSON value (null, "x", 42): that is JSON, only not an object.
    if (/only supports object and array/.test(err?.message ?? '') && isJsonText(err?.body))
      return new AppError('VALIDATION_FAILED', 'Request body is invalid', {
        details: [{ path: 'body', message: 'must be object' }],
      });
    return new AppError('INVALID_JSON', 'Request body is not valid JSON');
  }
  if (err?.type === 'encoding.unsupported' || err?.status === 415)
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported content encoding');
  if (err?.status === 405) return new AppError('METHOD_NOT_ALLOWED', 'Method not allowed on this path');
  if (err?.expose && err.status !== undefined && err.status >= 400 && err.status < 500)
    return new AppError('BAD_REQUEST', String(err.message || 'Bad request'), {}, {}, err.status);
  if (isDatabaseUnavailable(err))
    return new AppError(
      'SERVICE_UNAVAILABLE',
      'The database is unavailable; retry shortly',
      {},
      { 'Retry-After': '2' },
    );
  return new AppError('INTERNAL', 'Internal server error');
}

const JSON_TYPE = 'application/json; charset=utf-8';

function routeMiddleware(route: RouteDef, deps: Deps) {
  const responses = deps.caches.responses.of(route);
  return async (ctx: AppContext) => {
    // Generation before any read: a write committed meanwhile keeps this answer out of the cache.
    const store =
      responses && isAnonymousRead(ctx.req)
        ? { gen: responses.generation(), key: responseKey(ctx.url, ctx.deps.now().getTime()) }
        : null;
    await authenticate(ctx, route);
    // Path parameters that cannot name anything (malformed id or handle) are a 404, as for unknown ones.
    if (route.params) {
      try {
        ctx.state.params = validate(route.params, { ...ctx.params }, 'params');
      } catch {
        throw new AppError('NOT_FOUND', 'Resource not found');
      }
    } else ctx.state.params = { ...ctx.params };
    ctx.state.query = route.query ? validate(route.query, { ...(ctx.query as object) }, 'query') : {};
    // The body parser reads every API body as JSON; no body at all is {}.
    ctx.state.body = route.body ? validate(route.body, ctx.request.body ?? {}, 'body') : undefined;
    // A request answered with a 4xx (validation, auth, 429, or the handler's own refusal) never
    // counts toward a rate limit: its attempts are taken back, with their headers.
    const taken: Taken[] = [];
    await settleAfter(
      taken,
      async () => {
        if (route.rateLimit) {
          const p = ctx.state.principal;
          const subject = {
            agentId: p?.kind === 'agent' ? p.agent.id : undefined,
            ownerId: p?.kind === 'agent' ? p.agent.owner_id : p?.kind === 'owner' ? p.owner.id : undefined,
            ip: ctx.ip,
          };
          for (const action of Array.isArray(route.rateLimit) ? route.rateLimit : [route.rateLimit]) {
            const t = await ctx.deps.limiter.take(action, subject);
            taken.push(t);
            // Several checks (search: per agent, then per address) each add their items to one field.
            for (const [name, value] of Object.entries(t.headers)) {
              const before = ctx.response.get(name);
              ctx.set(name, before ? `${before}, ${value}` : value);
            }
          }
        }
        await runHandler(route, ctx);
      },
      (o) => {
        const status = o.ok ? ctx.status : toAppError(o.error).status;
        return status >= 400 && status < 500;
      },
      (t) => {
        for (const name of Object.keys(t.headers)) ctx.remove(name);
      },
    );
    const tags = ctx.state.cacheTags;
    if (store && tags !== false && ctx.status === 200 && Buffer.isBuffer(ctx.body) && ctx.response.is('json'))
      responses!.put(store.key, ctx.body, store.gen, undefined, tags);
  };
}

/** The read-your-writes identities of a caller: an agent and its owner, or an owner. */
function principalIds(p: Principal | null): string[] {
  if (!p) return [];
  if (p.kind === 'owner') return [`owner:${p.owner.id}`];
  return p.agent.owner_id ? [`agent:${p.agent.id}`, `owner:${p.agent.owner_id}`] : [`agent:${p.agent.id}`];
}

/**
 * Runs the handler; a lag-tolerant read (`reads: 'replica'`) on a read replica when one is in use
 * and the caller did not write within the last few seconds. A replica failing under the read
 * (stopped, unreachable) is skipped from then on and the read runs again on the primary: the
 * client sees only the latency.
 */
async function runHandler(route: RouteDef, ctx: AppContext): Promise<void> {
  const deps = ctx.deps;
  const read =
    route.reads === 'replica' && deps.reads ? await deps.reads.forRead(principalIds(await readerPrincipal(ctx))) : null;
  const replica = read?.replica;
  if (!replica) {
    if (read?.ownWrite) ctx.state.ownWrite = true;
    return route.handler(ctx);
  }
  try {
    await onReplica(route, deps, replica, (d) => {
      if (d === deps) {
        // The primary's turn after the replica failed: what the first run set is dropped.
        ctx.body = undefined;
        ctx.status = 404;
      }
      ctx.deps = d;
      return route.handler(ctx);
    });
  } finally {
    ctx.deps = deps;
  }
}

/**
 * Runs `run` with the replica's database; a replica failing under it (stopped, unreachable) is
 * skipped from then on and `run` goes again with `deps`, the primary's. An AppError other than
 * SERVICE_UNAVAILABLE is the read's own answer (404...), not a failure.
 */
async function onReplica<T>(
  route: RouteDef,
  deps: Deps,
  replica: { name: string; db: Deps['db']; query: Deps['query'] },
  run: (d: Deps) => Promise<T>,
): Promise<T> {
  try {
    return await run({ ...deps, db: replica.db, query: replica.query });
  } catch (e) {
    if (e instanceof AppError && e.code !== 'SERVICE_UNAVAILABLE') throw e;
    if (isDatabaseUnavailable(e)) deps.reads!.replicas.failed(replica.name, e);
    else deps.log.warn({ err: e, route: route.operationId }, 'read on a replica failed; running it on the primary');
    return run(deps);
  }
}

const REQUEST_ID = /^[A-Za-z0-9._-]{8,100}$/;

/** The id a request is answered and logged with: the client's X-Request-Id when well-formed, else a new one. */
function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/** The headers of every answer, set before anything else. */
function setCommonHeaders(res: ServerResponse, requestId: string, hsts: boolean): void {
  res.setHeader('X-Request-Id', requestId);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Served over HTTPS (PUBLIC_URL says so): browsers keep to HTTPS for a year.
  if (hsts) res.setHeader('Strict-Transport-Security', 'max-age=31536000');
}

/** Milliseconds since `started` (process.hrtime.bigint()), to a tenth, for the access line. */
function elapsedMs(started: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10;
}

/**
 * The path of a URL that Koa (parseurl) splits at its first '?' alone: none of '#' or white
 * space, which it hands to the full URL parser. Null otherwise (such a request takes Koa's path).
 */
const PLAIN_URL = /^(\/[^?#\s]*)(?:\?([^#\s]*))?$/;

/**
 * Answers an anonymous read from the response cache (src/cache/response-cache.ts) with the
 * status, headers, body and access-log line the middleware chain would give it; false when it
 * has no cached answer, and the request goes through Koa.
 */
function cachedAnswer(deps: Deps, accessLog: AccessLog, hsts: boolean) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (!isAnonymousRead(req)) return false;
    const started = process.hrtime.bigint();
    const url = req.url ?? '';
    const body = deps.caches.responses.lookup(url, deps.now().getTime());
    const path = body === undefined ? null : PLAIN_URL.exec(url)?.[1];
    if (!path) return false;
    const requestId = requestIdOf(req);
    setCommonHeaders(res, requestId, hsts);
    res.statusCode = 200;
    res.setHeader('Content-Type', JSON_TYPE);
    res.setHeader('Content-Length', body!.length);
    res.end(body);
    accessLog.request({ requestId, method: 'GET', path, status: 200, ms: elapsedMs(started) });
    return true;
  };
}

/**
 * A query string as Koa's ctx.query reads it (koa/lib/search-params.js): URLSearchParams, a key
 * given more than once as the array of its values, every key an own property (`__proto__` too).
 */
function parseQuery(querystring: string): Record<string, string | string[]> {
  const params = new URLSearchParams(querystring);
  const query = {};
  for (const key of params.keys()) {
    const values = params.getAll(key);
    Object.defineProperty(query, key, {
      value: values.length <= 1 ? values[0] : values,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return query;
}

/**
 * A read answered before Koa (RouteDef.read or .anonymous) a path names, with its path parameters
 * as the router decodes them and its route's response cache.
 */
type DirectMatch = (
  path: string,
) => { route: RouteDef; params: Record<string, string>; responses: TtlCache<Buffer> | undefined } | null;

/**
 * Answers an anonymous GET of a public read (`publicRead`, src/http/route.ts) or of a route with
 * an anonymous read (RouteDef.anonymous: the feed) without Koa: the route the API router would run
 * for this path, its parameters validated as routeMiddleware does (a malformed one is a 404), or
 * its query, the read run where runHandler would run it (a replica when one is in use), and the
 * status, headers, body (the error envelope included), response cache entry and access line the
 * middleware chain would give it. Null when another path answers the request.
 */
function directAnswer(deps: Deps, accessLog: AccessLog, hsts: boolean, match: DirectMatch) {
  return (req: IncomingMessage, res: ServerResponse): Promise<void> | null => {
    if (!isAnonymousRead(req)) return null;
    const url = PLAIN_URL.exec(req.url ?? '');
    const found = url ? match(url[1]) : null;
    return found && answerRead(deps, accessLog, hsts, req, res, url![1], url![2] ?? '', found);
  };
}

async function answerRead(
  deps: Deps,
  accessLog: AccessLog,
  hsts: boolean,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  querystring: string,
  { route, params: raw, responses }: NonNullable<ReturnType<DirectMatch>>,
): Promise<void> {
  const started = process.hrtime.bigint();
  const requestId = requestIdOf(req);
  setCommonHeaders(res, requestId, hsts);
  // Generation before any read, as routeMiddleware takes it.
  const store = responses ? { gen: responses.generation(), key: responseKey(req.url!, deps.now().getTime()) } : null;
  let status = 200;
  let headers: Record<string, string> = {};
  let body: string | Buffer;
  try {
    let params: Record<string, string>;
    try {
      params = route.params ? validate(route.params, { ...raw }, 'params') : { ...raw };
    } catch {
      throw new AppError('NOT_FOUND', 'Resource not found');
    }
    const target = route.reads === 'replica' && deps.reads ? await deps.reads.forRead([]) : null;
    const onTarget = <T>(run: (d: Deps) => Promise<T>) =>
      target?.replica ? onReplica(route, deps, target.replica, run) : run(deps);
    if (route.anonymous) {
      const query: Record<string, unknown> = route.query
        ? validate(route.query, { ...parseQuery(querystring) }, 'query')
        : {};
      const read = route.anonymous;
      const a = await onTarget((d) => read(d, query));
      body = a.body;
      if (store && a.cacheTags !== false) responses!.put(store.key, a.body, store.gen, undefined, a.cacheTags);
    } else {
      const read = route.read!;
      body = readBody(await onTarget((d) => read(d, params)));
    }
  } catch (e) {
    const err = toAppError(e);
    if (err.status >= 500) deps.log.error({ err: e, requestId, method: 'GET', path }, 'request failed');
    status = err.status;
    headers = err.headers;
    body = JSON.stringify(errorBody(err));
  }
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, String(value));
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
  accessLog.request({ requestId, method: 'GET', path, status, ms: elapsedMs(started) });
}

/**
 * Koa with answers in front of it: a cached anonymous read (response cache), then an anonymous
 * public read (directAnswer) is answered before Koa builds its context and runs the middleware,
 * about a quarter of the web process's CPU for such a read (perf of GET /leaderboards; GET
 * /posts/{id}: 112 -> 82 µs).
 */
class SvcApp extends Koa {
  constructor(
    options: { proxy: boolean; maxIpsCount: number },
    private readonly cached: (req: IncomingMessage, res: ServerResponse) => boolean,
    private readonly direct: (req: IncomingMessage, res: ServerResponse) => Promise<void> | null,
  ) {
    super(options);
  }

  override callback(): ReturnType<Koa['callback']> {
    const handle = super.callback();
    return (req, res) =>
      this.cached(req as IncomingMessage, res as ServerResponse)
        ? Promise.resolve()
        : (this.direct(req as IncomingMessage, res as ServerResponse) ?? handle(req, res));
  }
}

/**
 * The group of routes a path belongs to: its first segment after /api/v1 (posts, agents, ...),
 * or its first segment outside it (.well-known), lowercased as the routes match.
 */
function routeGroup(path: string): string {
  const p = path.toLowerCase();
  const rest = p.startsWith('/api/v1/') ? p.slice('/api/v1/'.length) : p.slice(1);
  const end = rest.indexOf('/');
  return end < 0 ? rest : rest.slice(0, end);
}

/**
 * The API's routes, one router per group (routeGroup): a request is matched against its
 * group's few routes, not against all of them (@koa/router tests each route's pattern in turn,
 * about 5 % of the web process's CPU for a read that is not cached). Each group's router answers
 * its own paths' other methods (405 with Allow) as one router for all did.
 */
function apiRouter(deps: Deps): { middleware: Koa.Middleware<AppState, AppContextExtension>; direct: DirectMatch } {
  const routers = new Map<string, Router<AppState, AppContextExtension>>();
  /** The router's layer of each read answered before Koa (RouteDef.read, .anonymous). */
  const reads = new Map<unknown, { route: RouteDef; responses: TtlCache<Buffer> | undefined }>();
  for (const r of apiRoutes()) {
    const path = fullPath(r);
    let router = routers.get(routeGroup(path));
    if (!router) routers.set(routeGroup(path), (router = new Router()));
    router[r.method](path, routeMiddleware(r, deps));
    if (r.read || r.anonymous) {
      if (r.anonymous && (r.auth !== 'public' || r.params || ![undefined, 'read'].includes(r.rateLimit as string)))
        throw new Error(
          `route ${r.operationId}: an anonymous read needs a public route without path parameters, limited by read at most`,
        );
      reads.set(router.stack[router.stack.length - 1], { route: r, responses: deps.caches.responses.of(r) });
    }
  }
  const groups = new Map(
    [...routers].map(([group, router]) => [group, { routes: router.routes(), allowed: router.allowedMethods() }]),
  );
  return {
    middleware: (ctx, next) => {
      const g = groups.get(routeGroup(ctx.path));
      if (!g) return next();
      // The router's context types add what it sets on the context (params, router).
      return g.routes(ctx as Parameters<typeof g.routes>[0], () =>
        g.allowed(ctx as Parameters<typeof g.allowed>[0], next),
      );
    },
    // The layer the router would run first for a GET of this path (its first match), with the
    // parameters it would decode: a public read only when that layer is one.
    direct: (path) => {
      const router = routers.get(routeGroup(path));
      const layer = router?.match(path, 'GET').pathAndMethod[0];
      const read = layer && reads.get(layer);
      return read ? { ...read, params: layer.params(path, layer.captures(path)) } : null;
    },
  };
}

export interface AppOptions {
  /** Extra routers mounted after the API (web pages). */
  extraRouters?: AppRouter[];
}

/** The Koa application, without listen(): the server and the tests both use it. */
export function createApp(deps: Deps, opts: AppOptions = {}): Koa {
  // ctx.ip (per-IP limits) is the Nth X-Forwarded-For address from the right behind N trusted
  // proxies, else the socket's address: the leftmost entries are whatever the client wrote.
  const hops = deps.config.trustProxyHops;
  const accessLog = requestLogger(deps.log);
  const hsts = deps.config.publicUrl.startsWith('https:');
  const api = apiRouter(deps);
  const app = new SvcApp(
    { proxy: hops > 0, maxIpsCount: hops },
    cachedAnswer(deps, accessLog, hsts),
    directAnswer(deps, accessLog, hsts, api.direct),
  );
  app.context.deps = deps;
  // Koa reports here what happens after a handler: a response that could not be finished because
  // the client went away or was dropped for sending too slowly (408). Those are the client's
  // doing; anything else is ours. (Without a listener Koa prints to stderr.)
  app.on('error', (err: Error & { code?: string }) => {
    if (isClientConnectionError(err)) deps.log.debug({ code: err.code }, 'client connection ended before the response');
    else deps.log.error({ err }, 'response failed');
  });

  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(ctx.req);
    ctx.state.requestId = requestId;
    setCommonHeaders(ctx.res, requestId, hsts);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError('NOT_FOUND', 'No such route');
      // The API router's plain answer to another method on a known path (its Allow header stays);
      // a method it does not know at all (TRACE, PROPFIND: its 501) is not allowed there either.
      if ((ctx.status === 405 || ctx.status === 501) && isApiPath(ctx.path)) throw toAppError({ status: 405 });
    } catch (e) {
      const err = toAppError(e);
      if (err.status >= 500)
        deps.log.error({ err: e, requestId, method: ctx.method, path: ctx.path }, 'request failed');
      ctx.status = err.status;
      ctx.set(err.headers);
      ctx.body = errorBody(err);
    } finally {
      // A request Node refused mid-body (too slow, bad framing) was answered by the server, not by us.
      const status = clientErrorStatus(ctx.req.socket) ?? ctx.status;
      accessLog.request({ requestId, method: ctx.method, path: ctx.path, status, ms: elapsedMs(started) });
    }
  });

  // Bodies declared larger than the limit are refused before reading, whatever their type.
  app.use(async (ctx, next) => {
    const len = Number(ctx.get('content-length') || 0);
    if (len > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${MAX_BODY_BYTES} bytes`);
    await next();
  });
  // An API body is JSON whatever its Content-Type says (curl -d sends form-urlencoded): parsed as
  // JSON, or 400 INVALID_JSON; never silently dropped. Web form posts are parsed by the pages.
  const parseJson = bodyParser({
    enableTypes: ['json'],
    jsonLimit: '64kb',
    strict: true,
    detectJSON: (ctx) => ctx.method !== 'GET' && ctx.method !== 'HEAD' && isApiPath(ctx.path),
  });
  // Requests without a body (most reads) skip the parser, which would only set {}. A body that
  // fails to decompress (Content-Encoding gzip/deflate/br over bytes that are not) is the
  // client's: zlib's error carries no status and would otherwise be a 500.
  app.use(async (ctx, next) => {
    if (!(ctx.get('content-length') || ctx.get('transfer-encoding'))) return next();
    try {
      await parseJson(ctx, async () => undefined);
    } catch (e) {
      // A body Node gave up on (too slow, bad framing) was answered by the server's clientError
      // handler, whose status the access line takes; what is thrown here reaches no one.
      if (e instanceof AppError || typeof (e as Thrown)?.status === 'number') throw e;
      throw new AppError(
        'INVALID_JSON',
        `Request body could not be decoded (Content-Encoding: ${ctx.get('content-encoding') || 'identity'})`,
      );
    }
    // The parser refuses `__proto__` keys; `constructor.prototype` is refused the same way here.
    if (findConstructorPrototype(ctx.request.body, 'body')) throw prototypeKeyRefused();
    ctx.request.body = wellFormedStrings(ctx.request.body);
    return next();
  });

  // Read-your-writes with read replicas: a write by an agent or owner (an API call, or a web form
  // of the owner's session) marks it before the answer goes out, so its next lag-tolerant reads,
  // through any web process, go to the primary.
  if (deps.reads) {
    const reads = deps.reads;
    app.use(async (ctx, next) => {
      try {
        await next();
      } finally {
        if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
          const viewer = resolvedViewer(ctx as AppContext);
          const who = ctx.state.principal
            ? principalIds(ctx.state.principal)
            : viewer
              ? [`owner:${viewer.owner.id}`]
              : [];
          await reads.noteWrite(who);
        }
      }
    });
  }
  app.use(api.middleware);
  // GET /skill.md, /heartbeat.md, /llms.txt: documents about the API, outside it.
  const skill = skillRouter();
  app.use(skill.routes());
  app.use(skill.allowedMethods());
  // The API's paths never reach the web pages: an unknown API path or method stays a JSON
  // 404 NOT_FOUND / 405 METHOD_NOT_ALLOWED, not the pages' plain-text 405.
  for (const extra of opts.extraRouters ?? []) {
    for (const mw of [extra.routes(), extra.allowedMethods()])
      app.use((ctx, next) => (isApiPath(ctx.path) ? next() : mw(ctx as Parameters<typeof mw>[0], next)));
  }
  return app;
}
