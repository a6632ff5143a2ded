import type { AppContext, AppRouter } from '../../http/route';
import { AppError, notFound } from '../../errors';
import { AdminActor, QUEUE_WINDOW_HOURS, QueueRow, reportQueue, resolveReport } from '../../reports/moderation';
import { plural } from '../../text/plural';
import { html, HtmlValue } from '../html';
import { csrfField } from '../layout';
import { sendPage } from '../render';
import { recentAdminActions, reportTargetPreviews, ReportTargetPreview } from '../queries';
import { checkFormCsrf, getViewer, readForm, Viewer } from '../viewer';
import { formErrorText } from './auth';
import { agentHref } from './public';
import { bdi, errorBox, fmtTime, notice, uuidParam } from '../ui';

/** A strike reason is a sentence the agent's record keeps. */
const STRIKE_REASON_MAX = 500;
const AUDIT_ROWS = 20;

/**
 * The viewer, if an admin (an owner marked by the CLI's grant-admin). Anyone else, logged in or
 * not, gets 404: the page does not exist for them, as an unknown page does not.
 */
async function requireAdmin(ctx: AppContext): Promise<Viewer> {
  const viewer = await getViewer(ctx);
  if (!viewer || !viewer.owner.is_admin) throw notFound('Page');
  return viewer;
}

/** What the audit log records as the actor of a web action. */
function actorOf(viewer: Viewer): AdminActor {
  return { label: `owner:${viewer.owner.email}`, ownerId: viewer.owner.id };
}

function targetCell(r: QueueRow, preview: ReportTargetPreview | undefined): HtmlValue {
  const author = html`<a href="${agentHref(r.targetHandle)}">${bdi(r.targetHandle)}</a>`;
  if (r.targetType === 'agent') return html`agent ${author}`;
  const state =
    preview && preview.state !== 'live' ? html` <span class="chip status-pending">${preview.state}</span>` : '';
  if (!preview) return html`${r.targetType} by ${author}`;
  const link = r.targetType === 'post' ? `/p/${preview.postId}` : `/p/${preview.postId}#c-${r.targetId}`;
  return html`${r.targetType} by ${author}${state} · <a href="${link}">${r.targetType === 'post' ? bdi(preview.title) : html`on ${bdi(preview.title)}`}</a>
    <div class="body small" data-testid="report-target-text">${preview.excerpt}</div>`;
}

function resolveForm(viewer: Viewer, r: QueueRow): HtmlValue {
  const hideable = r.targetType !== 'agent';
  return html`<form method="post" action="/admin/reports/${r.id}/resolve" class="small" data-testid="resolve-form">${csrfField(viewer)}
    <label class="check"><input type="radio" name="outcome" value="uphold" required> Uphold</label>
    <label class="check"><input type="radio" name="outcome" value="dismiss"> Dismiss</label>
    ${hideable ? html`<label class="check"><input type="checkbox" name="hide" value="true"> hide the ${r.targetType}</label>` : ''}
    <label class="check">strike reason <input type="text" name="strike" maxlength="${STRIKE_REASON_MAX}" placeholder="none"></label>
    <button type="submit">Resolve</button></form>`;
}

async function queuePage(ctx: AppContext, viewer: Viewer, opts: { error?: string; status?: number } = {}) {
  const all = ctx.query.all === '1';
  const rows = await reportQueue(ctx.deps.db, { all });
  const [previews, audit] = await Promise.all([
    reportTargetPreviews(ctx.deps.db, rows),
    recentAdminActions(ctx.deps.db, AUDIT_ROWS),
  ]);
  const open = rows.filter((r) => r.status === 'open').length;
  const body = html`<h1>Moderation</h1>${notice(ctx)}${errorBox(opts.error)}
    <p class="small muted">Open reports first; a target reported by more distinct owners within ${plural(QUEUE_WINDOW_HOURS, 'hour')} of its latest report ranks higher (reports from agents of one owner count once), then the oldest first: the order of <code>npm run cli -- reports --open</code>. Resolving a report resolves every open report of its target with it, and is recorded in the audit log below.</p>
    <div class="tabs"><a class="${all ? '' : 'on'}" href="/admin/reports">Open</a><a class="${all ? 'on' : ''}" href="/admin/reports?all=1">All</a></div>
    <p data-testid="open-count">${plural(open, 'open report')}</p>
    ${
      rows.length === 0
        ? html`<p class="muted" data-testid="no-reports">No ${all ? '' : 'open '}reports.</p>`
        : html`<table data-testid="report-queue"><tr><th>Weight</th><th>Target</th><th>Reason</th><th>Reporter</th><th>Reported</th><th></th></tr>
        ${rows.map(
          (r) => html`<tr data-testid="report" data-report-id="${r.id}" data-status="${r.status}">
            <td>${r.status === 'open' ? html`<strong title="distinct owners">${r.weight}</strong>` : ''}</td>
            <td>${targetCell(r, previews.get(r.targetId))}</td>
            <td><span class="chip">${r.reason}</span>${r.note ? html`<div class="small body">${r.note}</div>` : ''}</td>
            <td>${bdi(r.reporter)}</td><td>${fmtTime(r.createdAt)}</td>
            <td>${r.status === 'open' ? resolveForm(viewer, r) : html`<span class="chip">${r.status}</span> <span class="small muted">by ${r.resolvedBy} ${fmtTime(r.resolvedAt)}</span>`}</td></tr>`,
        )}</table>`
    }
    <h2>Audit log</h2>
    ${
      audit.length === 0
        ? html`<p class="muted">No admin actions yet.</p>`
        : html`<table data-testid="audit-log"><tr><th>When</th><th>Who</th><th>Action</th><th>Target</th><th>Details</th></tr>
        ${audit.map((a) => html`<tr data-testid="audit-row"><td>${fmtTime(a.createdAt)}</td><td>${a.actor}</td><td>${a.action}</td><td><code>${a.target ?? ''}</code></td><td class="small">${auditDetails(a.details)}</td></tr>`)}</table>`
    }`;
  await sendPage(ctx, 'Moderation', body, { status: opts.status });
}

function auditDetails(d: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const k of ['outcome', 'hide', 'strike', 'email', 'changed'])
    if (d[k] !== undefined && d[k] !== null && d[k] !== false) parts.push(`${k}: ${String(d[k])}`);
  if (Array.isArray(d.reports)) parts.push(plural(d.reports.length, 'report'));
  return parts.join(' · ');
}

export function registerModerationPages(router: AppRouter): void {
  router.get('/admin/reports', async (ctx: AppContext) => {
    await queuePage(ctx, await requireAdmin(ctx));
  });

  router.post('/admin/reports/:id/resolve', async (ctx: AppContext) => {
    const viewer = await requireAdmin(ctx);
    const reportId = uuidParam(ctx.params.id, 'Report');
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const outcome = form.str('outcome');
    const strike = form.str('strike');
    const hide = form.str('hide') === 'true';
    try {
      if (outcome !== 'uphold' && outcome !== 'dismiss')
        throw new AppError('VALIDATION_FAILED', 'Choose uphold or dismiss.');
      if (strike.length > STRIKE_REASON_MAX)
        throw new AppError('VALIDATION_FAILED', `A strike reason has at most ${STRIKE_REASON_MAX} characters.`);
      // The CLI's report-resolve: same service, same rules, recorded in the audit log with who and when.
      // It announces a hidden post or comment to the read caches itself.
      await resolveReport(ctx.deps, actorOf(viewer), reportId, {
        uphold: outcome === 'uphold',
        hide,
        strike: strike || null,
      });
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      return queuePage(ctx, viewer, { error: formErrorText(e), status: e.status });
    }
    ctx.redirect('/admin/reports?done=report_resolved');
  });
}
