import type { AppContext } from '../http/route';
import type { Config } from '../config';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../identity/authenticate';

/**
 * The Set-Cookie header is written by hand so it carries exactly the session cookie's attributes
 * (Max-Age and Expires, HttpOnly, SameSite=Lax, Secure outside development and test) whatever
 * the transport in front of the process: koa's cookie jar refuses Secure on plain http.
 */
export function sessionCookieHeader(config: Config, value: string, maxAgeSeconds: number, now = new Date()): string {
  const parts = [
    `${SESSION_COOKIE}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    `Expires=${new Date(now.getTime() + maxAgeSeconds * 1000).toUTCString()}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (config.nodeEnv !== 'development' && config.nodeEnv !== 'test') parts.push('Secure');
  return parts.join('; ');
}

export function setSessionCookie(ctx: AppContext, cookie: string): void {
  ctx.append(
    'Set-Cookie',
    sessionCookieHeader(ctx.deps.config, cookie, Math.floor(SESSION_TTL_MS / 1000), ctx.deps.now()),
  );
  ctx.set('Cache-Control', 'no-store');
}

export function clearSessionCookie(ctx: AppContext): void {
  ctx.append('Set-Cookie', sessionCookieHeader(ctx.deps.config, '', 0, new Date(0)));
  ctx.set('Cache-Control', 'no-store');
}
