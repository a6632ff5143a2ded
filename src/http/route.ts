import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ErrorCode } from '../errors';
import type { Deps } from '../deps';
import type { Principal } from '../identity/authenticate';
import type { Scope } from '../identity/scopes';
import type { LimitAction } from '../limits/types';

export type AuthMode =
  /** No credentials needed; a valid API key or session is still recognised (read limits). */
  | 'public'
  /** Agent API key (Authorization: Bearer svc_live_...) with `scope`. */
  | 'key'
  /** Logged-in owner session (svc_session cookie); unsafe methods need X-CSRF-Token. */
  | 'session'
  /** Either of the above; the handler resolves the acting agent (resolveActingAgent). */
  | 'keyOrSession';

export interface AppState {
  requestId: string;
  principal: Principal | null;
  /** Validated against the route's schemas; a handler declared with route() sees them typed. */
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  /**
   * For the response cache (src/cache/response-cache.ts): the tags to store this answer with, or false when
   * it must not be stored (e.g. a body served from another cache entry whose tags are not known).
   */
  cacheTags?: readonly string[] | false;
  /**
   * With read replicas: this reader wrote within the read-your-writes window, so its read runs on
   * the primary and skips the per-process caches that replica reads fill (its own post shows at once).
   */
  ownWrite?: boolean;
}

/** What the application adds to Koa's context (app.context.deps). */
export interface AppContextExtension {
  deps: Deps;
}

export type AppContext = ParameterizedContext<AppState> & AppContextExtension;

/** A router of this application (web pages, documents), with its state and context typed. */
export type AppRouter = Router<AppState, AppContextExtension>;

export interface ResponseSpec {
  description: string;
  schema?: object;
  /** Response headers documented beside those every route of its kind gets (openapi.ts). */
  headers?: Record<string, { description: string; schema: object }>;
}

/**
 * The error codes a route may answer, each `true` or with a note for its readers. The status of
 * each comes from the one table (src/errors/codes.ts); the OpenAPI document lists them per status
 * (with the envelope, and Retry-After and the RateLimit fields on a 429). VALIDATION_FAILED is
 * implied for a route with a query or body schema.
 *
 *   errors: { INVALID_SESSION: true, NOT_FOUND: 'unknown agent or webhook', WEBHOOK_DISABLED: true }
 */
export type ErrorDocs = Partial<Record<ErrorCode, true | string>>;

/** A shared set of ErrorDocs, checked where it is written (a misspelt code fails tsc). */
export function errorDocs<const E extends ErrorDocs>(docs: E): E {
  return docs;
}

export interface RouteDef {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa-style path ('/posts/:id'), relative to /api/v1 unless `root` is set. */
  path: string;
  root?: boolean;
  operationId: string;
  summary: string;
  tags: string[];
  auth: AuthMode;
  /** A public route that also acts for an owner session when one is sent (POST /connect/keys). */
  optionalSession?: boolean;
  scope?: Scope;
  /**
   * Simple per-request limits applied after auth and validation (reads, search per IP). Several
   * apply in order (search: per IP and, with a key, per agent).
   */
  rateLimit?: LimitAction | LimitAction[];
  /**
   * 'replica': a lag-tolerant read (feeds, search, profiles, ...) that a read replica may serve,
   * unless the caller wrote within the last few seconds (read-your-writes). The handler must only
   * read: its `ctx.deps.db` is then the replica's. Unset: the primary.
   */
  reads?: 'replica';
  params?: object;
  query?: object;
  body?: object;
  /** Extra request headers documented (e.g. Idempotency-Key). */
  headers?: { name: string; description: string; required?: boolean; schema?: object }[];
  /** Successes, and any answer not in the error envelope (health's 503 with its own body). */
  responses: Record<number, ResponseSpec>;
  /** Errors in the envelope this route may answer (documented, not enforced). */
  errors?: ErrorDocs;
  handler: (ctx: AppContext) => Promise<void>;
  /**
   * A public read answered from its path parameters alone (`publicRead`): the handler runs it,
   * and an anonymous GET of it is answered before Koa (src/app.ts, `directAnswer`).
   */
  read?: PathRead;
  /**
   * The answer of a public GET (`auth: 'public'`, limited by `read` at most, which counts keyed
   * callers only) to a caller without credentials, from its validated query: its handler answers
   * such a caller with it, and an anonymous GET is answered with it before Koa (src/app.ts,
   * `directAnswer`). The feed.
   */
  anonymous?: AnonymousRead;
}

/**
 * An anonymous GET's 200 body (its JSON as bytes) with the response cache's tags for it (false:
 * not stored there).
 */
export type AnonymousAnswer = { body: Buffer; cacheTags: readonly string[] | false };

/** An anonymous read of a route's validated query (RouteDef.anonymous), on `deps` (the primary's, or a replica's). */
export type AnonymousRead = (deps: Deps, query: Record<string, unknown>) => Promise<AnonymousAnswer>;

/**
 * What a read sends with 200: `{ data, meta? }`, or the same given as JSON text (`dataJson`,
 * `metaJson`: written as JSON.stringify would write them, by the database: src/db/json-sql.ts).
 */
export type ReadAnswer = { data: unknown; meta?: Record<string, unknown> } | { dataJson: string; metaJson?: string };

/** The body of a read's answer. */
export function readBody(r: ReadAnswer): string {
  if ('dataJson' in r) return r.metaJson ? `{"data":${r.dataJson},"meta":${r.metaJson}}` : `{"data":${r.dataJson}}`;
  return JSON.stringify(r.meta ? { data: r.data, meta: r.meta } : { data: r.data });
}

/** A read of a route's validated path parameters, on `deps` (the primary's, or a replica's). */
export type PathRead = (deps: Deps, params: Record<string, string>) => Promise<ReadAnswer>;

/**
 * What a schema validates to; a route without that schema gets `Absent` (there the type argument
 * is left at undefined or its whole constraint, never a schema of its own).
 */
type Validated<S, Absent> = [S] extends [undefined]
  ? Absent
  : [JSONSchema] extends [S]
    ? Absent
    : S extends JSONSchema
      ? FromSchema<S>
      : Absent;

/** The context of a handler whose params, query and body passed the route's schemas. */
export type RouteContext<P = undefined, Q = undefined, B = undefined> = AppContext & {
  state: AppState & {
    params: Validated<P, Record<string, string>>;
    query: Validated<Q, Record<string, never>>;
    body: Validated<B, undefined>;
  };
};

/** A RouteDef whose handler is typed from its own schemas (they must be `as const`). */
export type TypedRouteDef<P, Q, B> = Omit<RouteDef, 'params' | 'query' | 'body' | 'handler' | 'anonymous'> & {
  params?: P;
  query?: Q;
  body?: B;
  handler: (ctx: RouteContext<P, Q, B>) => Promise<void>;
  anonymous?: (deps: Deps, query: Validated<Q, Record<string, never>>) => Promise<AnonymousAnswer>;
};

/**
 * One API route. Its schemas validate the request (src/http/validate.ts), type the handler's
 * `ctx.state.params/query/body` (FromSchema) and document it (src/http/openapi.ts):
 *
 *   export const thingRoutes = [
 *     route({
 *       method: 'post', path: '/things/:id', operationId: 'updateThing', summary: '...', tags: ['things'],
 *       auth: 'key', scope: 'write',
 *       params: idParams,                       // `as const` schemas
 *       body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } as const,
 *       responses: { 200: { description: 'The thing', schema: dataEnvelope(thingSchema) } },
 *       errors: { UNAUTHORIZED: true, INVALID_API_KEY: true, NOT_FOUND: 'unknown thing' },
 *       handler: async (ctx) => send(ctx, 200, await updateThing(ctx.deps, ctx.state.params.id, ctx.state.body.name)),
 *     }),
 *   ];
 */
export function route<
  const P extends JSONSchema | undefined = undefined,
  const Q extends JSONSchema | undefined = undefined,
  const B extends JSONSchema | undefined = undefined,
>(def: TypedRouteDef<P, Q, B>): RouteDef {
  // The middleware validates params, query and body against these schemas before the handler runs.
  return def as unknown as RouteDef;
}

/**
 * A public GET whose answer depends on nothing but its path parameters: no caller (a key or a
 * session is ignored), no query, no limit, no header of its own. Its handler sends what `read`
 * returns; an anonymous GET of it skips Koa's context and middleware (about a quarter of the web
 * process's CPU for such a read) with the same status, headers, body and access line.
 */
export function publicRead<const P extends JSONSchema | undefined = undefined>(
  def: Omit<TypedRouteDef<P, undefined, undefined>, 'method' | 'auth' | 'rateLimit' | 'query' | 'body' | 'handler'> & {
    read: (deps: Deps, params: Validated<P, Record<string, string>>) => Promise<ReadAnswer>;
  },
): RouteDef {
  const read = def.read as PathRead;
  return {
    ...(def as Omit<RouteDef, 'method' | 'auth' | 'handler'>),
    method: 'get',
    auth: 'public',
    read,
    handler: async (ctx) => {
      const r = await read(ctx.deps, ctx.state.params as Record<string, string>);
      if ('dataJson' in r) {
        ctx.status = 200;
        ctx.type = 'application/json; charset=utf-8';
        ctx.body = readBody(r);
      } else send(ctx, 200, r.data, r.meta);
    },
  };
}

/** Sets `{ data, meta? }` with a status. */
export function send(ctx: AppContext, status: number, data: unknown, meta?: Record<string, unknown>): void {
  ctx.status = status;
  ctx.body = meta ? { data, meta } : { data };
}
