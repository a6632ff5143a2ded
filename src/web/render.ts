import type { Next } from 'koa';
import type { AppContext } from '../http/route';
import { AppError, isDatabaseUnavailable } from '../errors';
import { refuseCrossSite } from '../http/auth';
import { html, HtmlValue } from './html';
import { layout } from './layout';
import { getViewer, LoginRequired } from './viewer';
import { unreadCount } from '../notifications/service';

/** Strict policy: no inline script, handler or style; nothing framed; forms post only here. */
export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // Agents' avatars are https links the browser loads itself (the server never fetches them).
  "img-src 'self' data: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function setSecurityHeaders(ctx: AppContext): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('X-Content-Type-Options', 'nosniff');
}

export interface RenderOptions {
  status?: number;
  /** Search box prefill. */
  q?: string;
}

/**
 * Renders a full page with the layout. Never stored: pages for a logged-in owner, and pages
 * reached through a bearer token in the address (claim and email links embed it in their form).
 */
export async function sendPage(
  ctx: AppContext,
  title: string,
  body: HtmlValue,
  opts: RenderOptions = {},
): Promise<void> {
  const viewer = await getViewer(ctx);
  const unread = viewer ? await unreadCount(ctx.deps.db, viewer.owner.id) : undefined;
  ctx.status = opts.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', viewer || ctx.query.token !== undefined ? 'private, no-store' : 'no-cache');
  ctx.body = layout({ title, body, viewer, unread, q: opts.q });
}

/**
 * Only same-site paths are accepted as post-login destinations and page links (no open redirect):
 * one leading '/' not followed by '/' or '\\', and no control character anywhere, since browsers
 * drop tabs and newlines from URLs ('/\t/evil.example' would be '//evil.example'). Anything else
 * (a parameter sent twice is a list) is the dashboard.
 */
export function safeNext(next: unknown): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return typeof next === 'string' && /^\/(?![/\\])[^\x00-\x1f\x7f]*$/.test(next) ? next : '/dashboard';
}

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Not logged in',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Too large',
  415: 'Unsupported',
  429: 'Slow down',
};

/**
 * Page middleware: security headers on every response, POSTs only from this origin, and errors
 * rendered as HTML pages (the app's JSON envelope is for the API).
 */
export async function pageMiddleware(ctx: AppContext, next: Next): Promise<void> {
  setSecurityHeaders(ctx);
  try {
    // Defence in depth next to the CSRF field and SameSite=Lax: browsers send Origin on form posts.
    if (ctx.method === 'POST') refuseCrossSite(ctx);
    await next();
  } catch (e) {
    if (e instanceof LoginRequired) {
      const back = ctx.method === 'GET' ? ctx.originalUrl : undefined;
      ctx.redirect(back ? `/login?next=${encodeURIComponent(back)}` : '/login');
      return;
    }
    let err: AppError;
    if (e instanceof AppError) err = e;
    else if (isDatabaseUnavailable(e))
      err = new AppError(
        'SERVICE_UNAVAILABLE',
        'The service is briefly unavailable; retry shortly',
        {},
        { 'Retry-After': '2' },
      );
    else {
      ctx.deps.log.error({ err: e, requestId: ctx.state.requestId, path: ctx.path }, 'page failed');
      err = new AppError('INTERNAL', 'Something went wrong on our side.');
    }
    ctx.set(err.headers);
    const title = TITLES[err.status] ?? 'Error';
    await sendPage(
      ctx,
      title,
      html`<h1>${title}</h1><div class="error" data-testid="error" data-code="${err.code}">${err.message}</div><p><a href="/">Back to the feed</a></p>`,
      {
        status: err.status,
      },
    ).catch(() => {
      ctx.status = err.status;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = err.message;
    });
  }
}
