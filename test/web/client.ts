import http from 'http';
import { getContext } from '../helpers/context';

let nextAddress = 0;

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/**
 * A browser-like client for the server-rendered pages: keeps cookies, posts urlencoded forms.
 * Each client connects from its own loopback address (127.0.x.y), like a distinct visitor, so
 * per-address limits (signup/login, search) apply per client as they would per person.
 */
export class WebClient {
  cookies = new Map<string, string>();
  readonly address: string;

  constructor(address?: string) {
    const n = ++nextAddress + (process.pid % 200) * 250;
    this.address = address ?? `127.${20 + (Math.floor(n / 62500) % 200)}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(setCookies: string[]): void {
    for (const c of setCookies) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === '' || /Max-Age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    method: string,
    path: string,
    form?: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ): Promise<PageResponse> {
    const ctx = await getContext();
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = this.cookieHeader();
    let body: string | undefined;
    if (form) {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(form)) for (const x of Array.isArray(v) ? v : [v]) p.append(k, x);
      body = p.toString();
      h['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
    const url = new URL(ctx.baseUrl + path);
    const res = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>(
      (resolve, reject) => {
        const req = http.request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname + url.search,
            method,
            headers: h,
            localAddress: this.address,
            agent: false,
          },
          (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () =>
              resolve({ status: r.statusCode ?? 0, headers: r.headers, text: Buffer.concat(chunks).toString('utf8') }),
            );
            r.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      },
    );
    this.keep(res.headers['set-cookie'] ?? []);
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined && k !== 'set-cookie') out.set(k, Array.isArray(v) ? v.join(', ') : v);
    return { status: res.status, headers: out, text: res.text, location: res.headers.location ?? null };
  }

  get(path: string): Promise<PageResponse> {
    return this.request('GET', path);
  }

  post(path: string, form: Record<string, string | string[]>, headers?: Record<string, string>): Promise<PageResponse> {
    return this.request('POST', path, form, headers);
  }

  /** The CSRF field of the last page shown to this session. */
  async csrf(path = '/dashboard'): Promise<string> {
    const page = await this.get(path);
    const m = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!m) throw new Error(`no CSRF field on ${path} (status ${page.status})`);
    return m[1];
  }

  /** Signs up a fresh owner through the form; returns its email and password. */
  async signup(
    email = `w_${Math.random().toString(36).slice(2, 10)}@example.test`,
    password = 'correct horse battery',
  ): Promise<{ email: string; password: string }> {
    const res = await this.post('/signup', { email, password, displayName: 'Web Owner', next: '/dashboard' });
    if (res.status !== 302) throw new Error(`signup failed: ${res.status} ${res.text.slice(0, 300)}`);
    return { email, password };
  }
}
