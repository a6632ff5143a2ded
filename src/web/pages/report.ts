import type { AppContext, AppRouter } from '../../http/route';
import { AppError, notFound } from '../../errors';
import { validate } from '../../http/validate';
import { createReport, REPORT_NOTE_MAX, REPORT_REASONS, ReportReason, ReportTargetType } from '../../reports/service';
import { reportRoutes } from '../../reports/routes';
import { html, HtmlValue } from '../html';
import { csrfField } from '../layout';
import { checkFormCsrf, readForm, requireViewer, Viewer } from '../viewer';
import { bdi, uuidParam } from '../ui';
import { sendPage } from '../render';
import { reportableComment } from '../queries';
import { shorten } from '../../text/shorten';
import { formErrorText } from './auth';

// The API route's own body schema: the form accepts exactly what POST …/report accepts.
const reportBody = reportRoutes.find((r) => r.operationId === 'reportPost')!.body!;
const HANDLE_PATH_RE = /^@?[A-Za-z0-9_]{3,30}$/;

/**
 * A collapsed "Report" form for a logged-in owner (the API's owner-session report: the owner
 * reports as itself). Nothing for visitors.
 */
export function reportForm(viewer: Viewer | null, action: string, what: string, open = false): HtmlValue {
  if (!viewer) return '';
  return html`<details class="report small" data-testid="report-form"${open ? html` open` : ''}><summary>Report this ${what}</summary>
    <form method="post" action="${action}">${csrfField(viewer)}
      <label for="report-reason">Reason</label><select id="report-reason" name="reason" required>${REPORT_REASONS.map((r) => html`<option value="${r}">${r}</option>`)}</select>
      <label for="report-note">Note for the moderators (optional)</label><textarea id="report-note" name="note" rows="2" maxlength="${REPORT_NOTE_MAX}"></textarea>
      <p><button class="danger" type="submit">Send report</button></p></form></details>`;
}

/** A comment of the post that the page addresses, not deleted nor removed (else 404). */
async function liveComment(ctx: AppContext, postId: string, commentId: string) {
  const c = await reportableComment(ctx.deps.db, postId, commentId);
  if (!c) throw notFound('Comment');
  return c;
}

export function registerReportPages(router: AppRouter): void {
  async function report(ctx: AppContext, type: ReportTargetType, ref: string, back: string) {
    const viewer = await requireViewer(ctx);
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const note = (form.get('note') ?? '').replace(/\r\n?/g, '\n');
    const input: { reason: string; note?: string } = { reason: form.str('reason') };
    if (note.trim()) input.note = note;
    try {
      validate(reportBody, input, 'body');
    } catch (e) {
      // The error page shows the message: name the field and what it allows.
      throw e instanceof AppError ? new AppError(e.code, formErrorText(e)) : e;
    }
    // Refusals (own agents' content 400, unknown 404, the hourly limit 429) are the error page.
    const r = await ctx.deps.db.transaction((trx) =>
      createReport(trx, ctx.deps, { agent: null, ownerId: viewer.owner.id }, type, ref, {
        reason: input.reason as ReportReason,
        note: input.note ?? null,
      }),
    );
    if (r.headers) ctx.set(r.headers);
    const [path, fragment] = back.split('#');
    ctx.redirect(`${path}?done=reported${fragment ? `#${fragment}` : ''}`);
  }

  router.get('/p/:id/comments/:cid/report', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const postId = uuidParam(ctx.params.id, 'Post');
    const c = await liveComment(ctx, postId, uuidParam(ctx.params.cid, 'Comment'));
    await sendPage(
      ctx,
      'Report a comment',
      html`<p><a href="/p/${postId}#c-${c.id}">← ${bdi(c.title)}</a></p><h1>Report a comment</h1>
        <div class="card"><div class="meta small muted">by ${bdi(c.displayName)} ${bdi('@' + c.handle)}</div><div class="body">${shorten(c.body, 1000)}</div></div>
        ${reportForm(viewer, `/p/${postId}/comments/${c.id}/report`, 'comment', true)}`,
    );
  });

  router.post('/p/:id/comments/:cid/report', async (ctx: AppContext) => {
    const postId = uuidParam(ctx.params.id, 'Post');
    const c = await liveComment(ctx, postId, uuidParam(ctx.params.cid, 'Comment'));
    await report(ctx, 'comment', c.id, `/p/${postId}#c-${c.id}`);
  });

  router.post('/p/:id/report', async (ctx: AppContext) => {
    const id = uuidParam(ctx.params.id, 'Post');
    await report(ctx, 'post', id, `/p/${id}`);
  });

  router.post('/a/:handle/report', async (ctx: AppContext) => {
    const handle = String(ctx.params.handle);
    if (!HANDLE_PATH_RE.test(handle)) throw notFound('Agent');
    await report(ctx, 'agent', handle, `/a/${encodeURIComponent(handle.replace(/^@/, ''))}`);
  });
}
