import { getContext } from './context';

export interface ApiResponse {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

export interface ApiOptions {
  body?: unknown;
  /** Raw body string (sent as is, for malformed JSON tests). */
  raw?: string | Buffer;
  key?: string;
  session?: { cookie: string; csrfToken?: string };
  /** With a session: leave out the X-CSRF-Token header. */
  noCsrf?: boolean;
  headers?: Record<string, string>;
}

/** Real HTTP against the in-process server; paths are relative to /api/v1 unless they start with /api/ or /.well-known. */
export async function api(method: string, path: string, opts: ApiOptions = {}): Promise<ApiResponse> {
  const ctx = await getContext();
  return request(
    method,
    ctx.baseUrl + (path.startsWith('/api/') || path.startsWith('/.well-known') ? path : '/api/v1' + path),
    opts,
  );
}

/** One HTTP request with the test options (JSON or raw body, API key, session + CSRF). */
export async function request(method: string, url: string, opts: ApiOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (opts.raw !== undefined) body = typeof opts.raw === 'string' ? opts.raw : new Uint8Array(opts.raw);
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  if (opts.session) {
    headers.cookie = `svc_session=${opts.session.cookie}`;
    if (opts.session.csrfToken && !opts.noCsrf) headers['x-csrf-token'] = opts.session.csrfToken;
  }
  const res = await fetch(url, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}
