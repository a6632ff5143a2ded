/** The outbound HTTP client of webhooks: one signed POST to a subscriber, behind the SSRF guard, with a timeout and a bounded response read. */
import http from 'http';
import https from 'https';
import {
  guardedLookup,
  GuardOptions,
  isForbiddenAddress,
  Resolver,
  systemResolver,
  WEBHOOK_URL_FORBIDDEN,
} from './ssrf';

export const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface AttemptResult {
  ok: boolean;
  /** HTTP status, null when no response arrived (network error, timeout, refused destination). */
  responseCode: number | null;
  latencyMs: number;
  error: string | null;
}

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  guard: GuardOptions;
  timeoutMs?: number;
  resolve?: Resolver;
}

/**
 * One delivery attempt with node's http(s) directly: the socket connects to the address our
 * lookup checked, redirects are never followed (a 3xx is a failure), the whole attempt is capped
 * at the timeout. Never throws: every outcome is an AttemptResult.
 */
export function postWebhook(o: PostOptions): Promise<AttemptResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const done = (r: Omit<AttemptResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latencyMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(o.url);
    } catch {
      return resolve({ ok: false, responseCode: null, latencyMs: 0, error: 'invalid URL' });
    }
    const isHttps = url.protocol === 'https:';
    if (!isHttps && !(o.guard.allowPrivate && url.protocol === 'http:')) {
      return resolve({
        ok: false,
        responseCode: null,
        latencyMs: 0,
        error: `${WEBHOOK_URL_FORBIDDEN}: scheme ${url.protocol}`,
      });
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    // Literal addresses never reach `lookup`, so they are checked here.
    if (!o.guard.allowPrivate && isForbiddenAddress(hostname)) {
      return resolve({
        ok: false,
        responseCode: null,
        latencyMs: 0,
        error: `${WEBHOOK_URL_FORBIDDEN}: forbidden address`,
      });
    }
    const timer = setTimeout(
      () => req.destroy(new Error(`timeout after ${o.timeoutMs ?? DELIVERY_TIMEOUT_MS} ms`)),
      o.timeoutMs ?? DELIVERY_TIMEOUT_MS,
    );
    const req = (isHttps ? https : http).request(
      {
        protocol: url.protocol,
        hostname,
        port: url.port || (isHttps ? 443 : 80),
        path: url.pathname + url.search,
        method: 'POST',
        headers: {
          ...o.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(o.body)),
          'user-agent': 'svc-webhooks/1',
        },
        // No pooled sockets: each attempt resolves and checks again.
        agent: false,
        // any: Node types `lookup` as dns.lookup's overloads, which no single function satisfies.
        lookup: guardedLookup(o.guard, o.resolve ?? systemResolver) as any,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_RESPONSE_BYTES) res.destroy();
        });
        const finish = () =>
          done({
            ok: status >= 200 && status < 300,
            responseCode: status,
            error: status >= 200 && status < 300 ? null : `HTTP ${status}`,
          });
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      },
    );
    req.on('error', (e: Error & { code?: string }) =>
      done({
        ok: false,
        responseCode: null,
        error:
          e.code === WEBHOOK_URL_FORBIDDEN ? `${WEBHOOK_URL_FORBIDDEN}: ${e.message}` : e.message || String(e.code),
      }),
    );
    req.end(o.body);
  });
}
