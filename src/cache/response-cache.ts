import type { IncomingMessage } from 'http';
import type { RouteDef } from '../http/route';
import type { TtlCache } from './ttl';

/**
 * Response micro-cache for anonymous reads of a few public GET routes (feed, leaderboards,
 * reputation), in front of routing, validation and the handler: a request with no credentials,
 * no cookie and no body whose exact URL got a 200 JSON answer within the route cache's TTL, in
 * the same minute of the service clock, is answered with the same body (its own request id and
 * access-log line). Entries live in the route's own TtlCache, so they follow its TTL and its
 * invalidation by writes (src/cache/ttl.ts). Requests with an API key or a session always take
 * the full path: their read limit (feed) must be counted.
 */

const byOperation = new Map<string, TtlCache<string>>();
const caches: TtlCache<string>[] = [];

/** Declares that the route `operationId` may answer anonymous requests from `cache`. */
export function cacheResponsesOf(operationId: string, cache: TtlCache<string>): void {
  byOperation.set(operationId, cache);
  if (!caches.includes(cache)) caches.push(cache);
}

/** The response cache of a route, checked once when the app is built: only public reads without per-IP limits qualify. */
export function responseCacheOf(route: RouteDef): TtlCache<string> | undefined {
  const cache = byOperation.get(route.operationId);
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

/** A stored 200 JSON body for this anonymous request, if any. */
export function cachedResponse(url: string, nowMs: number): string | undefined {
  if (caches.length === 0) return undefined;
  const key = responseKey(url, nowMs);
  for (const c of caches) {
    const body = c.get(key);
    if (body !== undefined) return body;
  }
  return undefined;
}
