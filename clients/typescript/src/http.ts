import { SvcError } from './errors';

export interface RetryInfo {
  attempt: number;
  /** Milliseconds the client will wait before the next attempt. */
  waitMs: number;
  method: string;
  path: string;
  error: SvcError;
}

export interface TransportOptions {
  /** Site root (http://localhost:3000) or the API root (…/api/v1); both work. */
  baseUrl: string;
  /** Agent API key `svc_live_…`. */
  apiKey?: string;
  /** Owner session: the svc_session cookie value and the login's CSRF token. */
  session?: { cookie: string; csrfToken?: string };
  /** Retries after a 429/503 or a network failure (default 3). 0 disables waiting. */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited out; the SvcError is thrown at once (default 120). */
  maxRetryAfterSeconds?: number;
  /** Per-attempt timeout in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Injected for tests or custom runtimes. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Called before each wait (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
  userAgent?: string;
}

export interface RequestOptions {
  /** An array value repeats the parameter (`type=a&type=b`). */
  query?: Record<string, string | number | boolean | readonly string[] | undefined | null>;
  body?: unknown;
  /** Overrides the generated Idempotency-Key of a write (reuse it when you retry a write yourself). */
  idempotencyKey?: string;
  /** Skip the API key/session even if the client has them (public bootstrap calls). */
  anonymous?: boolean;
  /** Path is relative to the site root instead of /api/v1. */
  root?: boolean;
  signal?: AbortSignal;
}

export interface RawResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function siteRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
}

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

function retryAfterOf(res: Response, errorBody: Record<string, unknown> | null): number | null {
  const fromBody = errorBody?.retryAfterSeconds;
  if (typeof fromBody === 'number' && Number.isFinite(fromBody)) return fromBody;
  const h = res.headers.get('retry-after');
  if (h && /^\d+$/.test(h.trim())) return Number(h.trim());
  if (h) {
    const at = Date.parse(h);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  return null;
}

/**
 * One HTTP exchange with the envelope rules of the API: `{data, meta?}` on success,
 * `{error:{code,message,…}}` otherwise. Waits out 429/503 Retry-After and retries network
 * failures with the same Idempotency-Key, so a retried write acts at most once.
 */
export class Transport {
  readonly root: string;
  private opts: TransportOptions;

  constructor(opts: TransportOptions) {
    if (!opts.baseUrl) throw new TypeError('baseUrl is required');
    this.opts = { ...opts };
    this.root = siteRoot(opts.baseUrl);
  }

  get apiKey(): string | undefined {
    return this.opts.apiKey;
  }

  setApiKey(key: string | undefined): void {
    this.opts.apiKey = key;
  }

  get session(): { cookie: string; csrfToken?: string } | undefined {
    return this.opts.session;
  }

  setSession(session: { cookie: string; csrfToken?: string } | undefined): void {
    this.opts.session = session;
  }

  options(): TransportOptions {
    return { ...this.opts };
  }

  url(path: string, query?: RequestOptions['query'], root = false): string {
    const u = new URL(this.root + (root ? '' : '/api/v1') + path);
    for (const [k, v] of Object.entries(query ?? {}))
      if (Array.isArray(v)) for (const x of v) u.searchParams.append(k, String(x));
      else if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
    return u.toString();
  }

  async request<T>(method: string, path: string, ro: RequestOptions = {}): Promise<RawResponse<T>> {
    const m = method.toUpperCase();
    const maxRetries = this.opts.maxRetries ?? 3;
    const maxWait = this.opts.maxRetryAfterSeconds ?? 120;
    const sleep = this.opts.sleep ?? realSleep;
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.userAgent) headers['user-agent'] = this.opts.userAgent;
    let payload: string | undefined;
    if (ro.body !== undefined) {
      payload = JSON.stringify(ro.body);
      headers['content-type'] = 'application/json';
    }
    // One key for the logical call: the server answers a retry with the first response.
    if (WRITE_METHODS.has(m)) headers['idempotency-key'] = ro.idempotencyKey ?? newIdempotencyKey();
    if (!ro.anonymous) {
      if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
      else if (this.opts.session) {
        headers.cookie = `svc_session=${this.opts.session.cookie}`;
        if (WRITE_METHODS.has(m) && this.opts.session.csrfToken) headers['x-csrf-token'] = this.opts.session.csrfToken;
      }
    }
    const url = this.url(path, ro.query, ro.root);

    for (let attempt = 1; ; attempt++) {
      let error: SvcError;
      let res: Response | undefined;
      try {
        const signals = [AbortSignal.timeout(this.opts.timeoutMs ?? 30000), ...(ro.signal ? [ro.signal] : [])];
        res = await doFetch(url, {
          method: m,
          headers,
          body: payload,
          redirect: 'manual',
          signal: AbortSignal.any(signals),
        });
      } catch (e: any) {
        if (ro.signal?.aborted) throw e;
        const timeout = e?.name === 'TimeoutError';
        error = new SvcError({
          status: 0,
          code: timeout ? 'TIMEOUT' : 'NETWORK_ERROR',
          message: String(e?.message ?? e),
          method: m,
          path,
          cause: e,
        });
      }
      if (res) {
        const text = await res.text();
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        if (res.ok) {
          if (res.status !== 204 && json === undefined) {
            throw new SvcError({
              status: res.status,
              code: 'INVALID_RESPONSE',
              message: 'The response is not JSON',
              method: m,
              path,
              requestId: res.headers.get('x-request-id'),
            });
          }
          return { status: res.status, headers: res.headers, body: json as T };
        }
        const env =
          json && typeof json === 'object' && json.error && typeof json.error === 'object'
            ? (json.error as Record<string, unknown>)
            : null;
        error = new SvcError({
          status: res.status,
          code: typeof env?.code === 'string' ? env.code : `HTTP_${res.status}`,
          message: typeof env?.message === 'string' ? env.message : text.slice(0, 200) || res.statusText,
          retryAfterSeconds: retryAfterOf(res, env),
          details: Array.isArray(env?.details) ? (env.details as { path?: string; message?: string }[]) : null,
          body: env,
          method: m,
          path,
          requestId: res.headers.get('x-request-id'),
        });
      }
      const waitMs = this.retryDelayMs(error!, attempt, maxWait);
      if (waitMs === null || attempt > maxRetries) throw error!;
      this.opts.onRetry?.({ attempt, waitMs, method: m, path, error: error! });
      await sleep(waitMs);
    }
  }

  /** null: not retryable. 429/503 wait what the server asked; network errors back off 0.5 s, 1 s, 2 s… */
  private retryDelayMs(err: SvcError, attempt: number, maxWaitSeconds: number): number | null {
    if (err.status === 429 || err.status === 503) {
      const s = err.retryAfterSeconds ?? 1;
      if (s > maxWaitSeconds) return null;
      // A little past the boundary: Retry-After is rounded to whole seconds.
      return Math.max(0, s) * 1000 + 50;
    }
    if (err.status === 0) return Math.min(8000, 500 * 2 ** (attempt - 1));
    return null;
  }
}
