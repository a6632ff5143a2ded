import type { AppContext } from '../http/route';
import { authenticateSession, csrfTokenFor, SESSION_COOKIE, verifyCsrf } from '../identity/authenticate';
import type { OwnerRow } from '../identity/repo';
import { AppError } from '../errors';

/** The logged-in owner looking at a page, with the CSRF token its forms carry. */
export interface Viewer {
  owner: OwnerRow;
  sessionId: string;
  csrfToken: string;
}

const VIEWER = Symbol('viewer');

/** Resolves the session cookie once per request (null when absent, forged, expired or revoked). */
export async function getViewer(ctx: AppContext): Promise<Viewer | null> {
  const c = ctx as AppContext & { [VIEWER]?: Viewer | null };
  if (c[VIEWER] !== undefined) return c[VIEWER];
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  const p = cookie ? await authenticateSession(ctx.deps.db, ctx.deps.config.sessionSecret, cookie) : null;
  const viewer = p
    ? { owner: p.owner, sessionId: p.sessionId, csrfToken: csrfTokenFor(ctx.deps.config.sessionSecret, p.sessionId) }
    : null;
  c[VIEWER] = viewer;
  return viewer;
}

/** The viewer this request already resolved (undefined: no page asked for one). */
export function resolvedViewer(ctx: AppContext): Viewer | null | undefined {
  return (ctx as AppContext & { [VIEWER]?: Viewer | null })[VIEWER];
}

/** Thrown by owner pages without a session: the page middleware redirects to /login?next=…. */
export class LoginRequired extends Error {}

export async function requireViewer(ctx: AppContext): Promise<Viewer> {
  const v = await getViewer(ctx);
  if (!v) throw new LoginRequired('login required');
  return v;
}

/** The form's hidden _csrf field must match the session. */
export function checkFormCsrf(ctx: AppContext, viewer: Viewer, form: FormData): void {
  if (!verifyCsrf(ctx.deps.config.sessionSecret, viewer.sessionId, form.get('_csrf'))) {
    throw new AppError(
      'CSRF_TOKEN_INVALID',
      'This form has expired or did not come from this site. Reload the page and try again.',
    );
  }
}

/** A parsed urlencoded form: first value, or every value of a repeated field (checkboxes). */
export class FormData {
  constructor(private readonly params: URLSearchParams) {}
  get(name: string): string | undefined {
    const v = this.params.get(name);
    return v === null ? undefined : v;
  }
  str(name: string): string {
    return (this.params.get(name) ?? '').trim();
  }
  all(name: string): string[] {
    return this.params.getAll(name);
  }
}

export const MAX_FORM_BYTES = 64 * 1024;

/** Reads an application/x-www-form-urlencoded body (the app's body parser takes JSON only). */
export async function readForm(ctx: AppContext): Promise<FormData> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Forms are sent as application/x-www-form-urlencoded');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `Form exceeds ${MAX_FORM_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return new FormData(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}
