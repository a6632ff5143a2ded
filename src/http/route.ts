import type { ParameterizedContext } from 'koa';
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
  params: Record<string, any>;
  query: Record<string, any>;
  body: any;
  /**
   * For the response cache (src/cache/response-cache.ts): the tags to store this answer with, or false when
   * it must not be stored (e.g. a body served from another cache entry whose tags are not known).
   */
  cacheTags?: readonly string[] | false;
}

export type AppContext = ParameterizedContext<AppState> & { deps: Deps };

export interface ResponseSpec {
  description: string;
  schema?: object;
  /** Response headers documented beside those every route of its kind gets (openapi.ts). */
  headers?: Record<string, { description: string; schema: object }>;
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
  params?: object;
  query?: object;
  body?: object;
  /** Extra request headers documented (e.g. Idempotency-Key). */
  headers?: { name: string; description: string; required?: boolean; schema?: object }[];
  responses: Record<number, ResponseSpec>;
  handler: (ctx: AppContext) => Promise<void>;
}

export function defineRoutes(routes: RouteDef[]): RouteDef[] {
  return routes;
}

/** Sets `{ data, meta? }` with a status. */
export function send(ctx: AppContext, status: number, data: unknown, meta?: Record<string, unknown>): void {
  ctx.status = status;
  ctx.body = meta ? { data, meta } : { data };
}
