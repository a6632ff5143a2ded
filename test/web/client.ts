import { getContext } from '../helpers/context';

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** A browser-like client for the server-rendered pages: keeps cookies, posts urlencoded forms. */
export class WebClient {
  cookies = new Map<string, string>();

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === '' || /Max-Age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: string, path: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<PageResponse> {
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
    const res = await fetch(ctx.baseUrl + path, { method, headers: h, body, redirect: 'manual' });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
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
  async signup(email = `w_${Math.random().toString(36).slice(2, 10)}@example.test`, password = 'correct horse battery'): Promise<{ email: string; password: string }> {
    const res = await this.post('/signup', { email, password, displayName: 'Web Owner', next: '/dashboard' });
    if (res.status !== 302) throw new Error(`signup failed: ${res.status} ${res.text.slice(0, 300)}`);
    return { email, password };
  }
}
