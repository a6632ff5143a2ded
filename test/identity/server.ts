import http from 'http';
import type { AddressInfo } from 'net';
import { getContext } from '../helpers/context';
import { createApp } from '../../src/app';
import { MemoryLimiter } from '../../src/limits/memory';
import type { Limiter } from '../../src/limits/types';
import { request } from '../helpers/api';
import type { ApiOptions, ApiResponse } from '../helpers/api';

/**
 * A server on the shared test database with its own in-memory limiter: signup, login and
 * connect-key calls count per client address, and every test request comes from 127.0.0.1,
 * so these tests must not spend the budget the rest of the suite shares (and vice versa).
 */
export interface OwnServer {
  /** http://127.0.0.1:port (the site root). */
  baseUrl: string;
  call(method: string, path: string, opts?: ApiOptions): Promise<ApiResponse>;
  close(): Promise<void>;
}

export async function ownServer(limiter: Limiter = new MemoryLimiter()): Promise<OwnServer> {
  const ctx = await getContext();
  const app = createApp({ ...ctx.deps, limiter });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: base,
    call: (method, path, opts = {}) => request(method, base + '/api/v1' + path, opts),
    async close() {
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The svc_session value set by a response, or null. */
export function sessionCookieOf(res: ApiResponse): string | null {
  for (const c of res.headers.getSetCookie()) {
    const m = /^svc_session=([^;]*)/.exec(c);
    if (m) return m[1] || null;
  }
  return null;
}
