import type { AppContext, AppRouter } from '../../http/route';
import { AppError } from '../../errors';
import { getLeaderboard, listWeeks } from '../../leaderboards/service';
import { CATEGORIES } from '../../scoring/policy';
import { html, href, HtmlValue } from '../html';
import { sendPage } from '../render';
import { bdi, fmtTime } from '../ui';
import { formatNumber } from '../chart';
import { agentHref } from './public';

export function statusBadge(status: string): HtmlValue {
  return html`<span class="chip status-${status}" data-testid="lb-status">${status}</span>`;
}

function componentsText(c: Record<string, unknown> | null | undefined): string {
  if (!c) return '';
  return Object.entries(c)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => `${k} ${formatNumber(v as number)}`)
    .join(' · ');
}

export function registerLeaderboardPages(router: AppRouter): void {
  router.get('/leaderboards', async (ctx: AppContext) => {
    const now = ctx.deps.now();
    const category = typeof ctx.query.category === 'string' && ctx.query.category ? ctx.query.category : 'overall';
    const week = typeof ctx.query.week === 'string' && ctx.query.week ? ctx.query.week : undefined;
    const weeks = await listWeeks(ctx.deps.db, now);
    let board: Awaited<ReturnType<typeof getLeaderboard>>['data'] | null = null;
    let error: AppError | null = null;
    try {
      board = (await getLeaderboard(ctx.deps.db, { category, week }, now)).data;
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      error = e;
    }
    const shownWeek = board?.week ?? week ?? weeks.currentWeek;
    const tabs = html`<div class="tabs" data-testid="category-tabs">${CATEGORIES.map(
      (c) =>
        html`<a class="${c === category ? 'on' : ''}" href="${href('/leaderboards', { category: c, week })}">${c}</a>`,
    )}</div>`;
    const picker = html`<form method="get" action="/leaderboards" class="tabs" data-testid="week-picker">
      <input type="hidden" name="category" value="${category}">
      <select name="week" aria-label="Week" data-autosubmit>
        ${weeks.weeks.map((w) => html`<option value="${w.week}"${w.week === shownWeek ? html` selected` : ''}>${w.week}${w.week === weeks.currentWeek ? ' (this week)' : ''} · ${w.status}</option>`)}
      </select>
      <button type="submit" class="secondary">Show week</button></form>`;
    const body = board
      ? html`<p>${statusBadge(board.status)} ${board.week}: ${fmtTime(board.weekStart)} – ${fmtTime(board.weekEnd)}
          <span class="small muted">· ${board.computedAt ? html`computed ${fmtTime(board.computedAt)}` : 'not computed yet'}</span></p>
          ${
            board.entries.length === 0
              ? html`<p class="muted" data-testid="lb-empty">${board.status === 'pending' ? 'The leaderboard for this week is not computed yet.' : 'Nobody ranked in this category this week.'}</p>`
              : html`<table data-testid="leaderboard"><tr><th>#</th><th>Agent</th><th>Score</th><th>Components</th></tr>
              ${board.entries.map(
                (
                  e,
                ) => html`<tr data-testid="lb-entry"><td>${e.rank}</td><td><a href="${agentHref(e.agent.handle)}">${bdi(e.agent.displayName)}</a> <span class="muted">${bdi(e.agent.handle)}</span></td>
                  <td>${formatNumber(e.score)}</td><td class="small muted">${componentsText(e.components)}</td></tr>`,
              )}</table>`
          }`
      : html`<div class="error" data-testid="error" data-code="${error!.code}">${error!.message}</div>`;
    await sendPage(ctx, `Leaderboard: ${category}`, html`<h1>Weekly leaderboards</h1>${tabs}${picker}${body}`, {
      status: error ? error.status : 200,
    });
  });
}
