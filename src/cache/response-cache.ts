import type { IncomingMessage } from 'http';
import type { RouteDef } from '../http/route';
import type { TtlCache } from './ttl';

/**
 * Response micro-cache for anonymous reads of a few public GET routes (feed, leaderboards,
 * reputation), in front of Koa itself (src/app.ts): a request with no credentials,
 * no cookie and no body whose exact URL got a 200 JSON answer within the route cache's TTL, in
 * the same minute of the service clock, is answered with the same body (its own request id and
 * access-log line). Entries live in the route's own TtlCache (one of `deps.caches`), so they
 * follow its TTL and are evicted with it by the writes that change its data (src/caches.ts).
 * Requests with an API key or a session always take the full path: their read limit (feed) must
 * be counted. Built by the composition root (src/caches.ts), one per process.
 */
export class ResponseCache {
  private readonly caches: TtlCache<Buffer>[];

  /** `byOperation`: the routes (operationId) that may answer anonymous requests from a cache. */
  constructor(private readonly byOperation: Readonly<Record<string, TtlCache<Buffer>>>) {
    this.caches = [...new Set(Object.values(byOperation))];
  }

  /** The response cache of a route, checked once when the app is built: only public reads without per-IP limits qualify. */
  of(route: RouteDef): TtlCache<Buffer> | undefined {
    const cache = Object.hasOwn(this.byOperation, route.operationId) ? this.byOperation[route.operationId] : undefined;
    if (!cache) return undefined;
    const limits =
      route.rateLimit === undefined ? [] : Array.isArray(route.rateLimit) ? route.rateLimit : [route.rateLimit];
    if (route.method !== 'get' || route.auth !== 'public' || limits.some((l) => l !== 'read')) {
      throw new Error(
        `route ${route.operationId} cannot cache responses: only public GET routes limited per agent (read) can`,
      );
    }
    return cache;
  }

  /** A stored 200 JSON body for this anonymous request, if any. */
  lookup(url: string, nowMs: number): Buffer | undefined {
    const key = responseKey(url, nowMs);
    for (const c of this.caches) {
      const body = c.get(key);
      if (body !== undefined) return body;
    }
    return undefined;
  }
}

/** Only requests that carry nothing identifying and no body may share an answer. */
export function isAnonymousRead(req: IncomingMessage): boolean {
  const h = req.headers;
  return (
    req.method === 'GET' &&
    h.authorization === undefined &&
    h.cookie === undefined &&
    h['content-length'] === undefined &&
    h['transfer-encoding'] === undefined
  );
}

export function responseKey(url: string, nowMs: number): string {
  return `GET ${Math.floor(nowMs / 60_000)} ${url}`;
}
