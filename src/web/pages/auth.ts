import { settleAfter, type Outcome, type Taken } from '../../limits/types';
import type { AppContext, AppRouter } from '../../http/route';
import { AppError } from '../../errors';
import { validate } from '../../http/validate';
import { login, logout, signup, verifyEmail } from '../../owners/service';
import { loginBody, signupBody } from '../../owners/schemas';
import { clearSessionCookie, setSessionCookie } from '../../owners/cookie';
import { html, href } from '../html';
import { safeNext, sendPage } from '../render';
import { checkFormCsrf, getViewer, readForm } from '../viewer';

/** A 400 VALIDATION_FAILED turned into one readable sentence for a form. */
export function formErrorText(e: AppError): string {
  const details = e.extra.details as { path: string; message: string }[] | undefined;
  if (e.code === 'VALIDATION_FAILED' && details?.length) {
    return details.map((d) => `${d.path.replace(/^body\/?/, '') || 'form'} ${d.message}`).join('; ');
  }
  return e.message;
}

function signupForm(next: string, values: { email?: string; displayName?: string }, error?: string) {
  return html`<h1>Create an owner account</h1>
    ${error ? html`<div class="error" data-testid="error">${error}</div>` : ''}
    <form method="post" action="/signup" class="card">
      <input type="hidden" name="next" value="${next}">
      <label for="email">Email</label><input id="email" type="email" name="email" required value="${values.email ?? ''}">
      <label for="displayName">Display name (optional)</label><input id="displayName" type="text" name="displayName" maxlength="64" value="${values.displayName ?? ''}">
      <label for="password">Password (at least 10 characters)</label><input id="password" type="password" name="password" minlength="10" required>
      <p><button type="submit">Sign up</button></p>
    </form>
    <p>Already have an account? <a href="${href('/login', { next })}">Log in</a></p>`;
}

function loginForm(next: string, email: string, error?: string) {
  return html`<h1>Log in</h1>
    ${error ? html`<div class="error" data-testid="error">${error}</div>` : ''}
    <form method="post" action="/login" class="card">
      <input type="hidden" name="next" value="${next}">
      <label for="email">Email</label><input id="email" type="email" name="email" required value="${email}">
      <label for="password">Password</label><input id="password" type="password" name="password" required>
      <p><button type="submit">Log in</button></p>
    </form>
    <p>No account yet? <a href="${href('/signup', { next })}">Sign up</a></p>`;
}

/** Same per-address budget as the API's signup and login: an attempt that fails is taken back. */
async function limitAuth(ctx: AppContext): Promise<Taken> {
  const t = await ctx.deps.limiter.take('auth_ip', { ip: ctx.ip });
  ctx.set(t.headers);
  return t;
}

/** A form answered with its errors (a 4xx) does not count; a server error counts, as in the API. */
const refusedForm = (o: Outcome<unknown>) => !o.ok && o.error instanceof AppError && o.error.status < 500;

export function registerAuthPages(router: AppRouter): void {
  router.get('/signup', async (ctx: AppContext) => {
    const next = safeNext(ctx.query.next);
    if (await getViewer(ctx)) return ctx.redirect(next);
    await sendPage(ctx, 'Sign up', signupForm(next, {}));
  });

  router.post('/signup', async (ctx: AppContext) => {
    const form = await readForm(ctx);
    const next = safeNext(form.get('next'));
    const input = {
      email: form.str('email'),
      password: form.get('password') ?? '',
      displayName: form.str('displayName') || null,
    };
    const taken: Taken[] = [];
    try {
      await settleAfter(
        taken,
        async () => {
          taken.push(await limitAuth(ctx));
          validate(signupBody, input, 'body');
          const { session } = await signup(ctx.deps, input, ctx.ip);
          setSessionCookie(ctx, session.cookie);
        },
        refusedForm,
      );
      ctx.redirect(next);
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      ctx.set(e.headers);
      await sendPage(
        ctx,
        'Sign up',
        signupForm(next, { email: input.email, displayName: input.displayName ?? '' }, formErrorText(e)),
        { status: e.status },
      );
    }
  });

  router.get('/login', async (ctx: AppContext) => {
    const next = safeNext(ctx.query.next);
    if (await getViewer(ctx)) return ctx.redirect(next);
    await sendPage(ctx, 'Log in', loginForm(next, ''));
  });

  router.post('/login', async (ctx: AppContext) => {
    const form = await readForm(ctx);
    const next = safeNext(form.get('next'));
    const email = form.str('email');
    const taken: Taken[] = [];
    try {
      await settleAfter(
        taken,
        async () => {
          taken.push(await limitAuth(ctx));
          validate(loginBody, { email, password: form.get('password') ?? '' }, 'body');
          const { session } = await login(ctx.deps, email, form.get('password') ?? '', ctx.ip);
          setSessionCookie(ctx, session.cookie);
        },
        refusedForm,
      );
      ctx.redirect(next);
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      ctx.set(e.headers);
      await sendPage(ctx, 'Log in', loginForm(next, email, formErrorText(e)), { status: e.status });
    }
  });

  router.post('/logout', async (ctx: AppContext) => {
    const viewer = await getViewer(ctx);
    const form = await readForm(ctx);
    if (viewer) {
      checkFormCsrf(ctx, viewer, form);
      await logout(ctx.deps, viewer.sessionId);
    }
    clearSessionCookie(ctx);
    ctx.redirect('/');
  });

  // The link of the verification email (owners' EMAIL_VERIFY_PATH); a GET must not change state,
  // so the page shows a button that confirms.
  router.get('/verify-email', async (ctx: AppContext) => {
    const token = String(ctx.query.token ?? '');
    await sendPage(
      ctx,
      'Confirm email',
      html`<h1>Confirm your email address</h1>
        <form method="post" action="/verify-email" class="card"><input type="hidden" name="token" value="${token}">
        <button type="submit">Confirm</button></form>`,
    );
  });

  router.post('/verify-email', async (ctx: AppContext) => {
    const form = await readForm(ctx);
    const token = form.str('token');
    if (!token) throw new AppError('VALIDATION_FAILED', 'The verification link is missing its token');
    const owner = await verifyEmail(ctx.deps, token);
    await sendPage(
      ctx,
      'Email confirmed',
      html`<h1>Email confirmed</h1><div class="notice" data-testid="notice">${owner.email} is verified.</div><p><a href="/dashboard">Go to the dashboard</a></p>`,
    );
  });
}
