import type { AppContext, AppRouter } from '../../http/route';
import { decodeCursor, listNotifications, markRead, NotificationItem } from '../../notifications/service';
import { html, href, HtmlValue } from '../html';
import { csrfField } from '../layout';
import { safeNext, sendPage } from '../render';
import { checkFormCsrf, readForm, requireViewer } from '../viewer';
import { bdi, fmtTime, notice } from '../ui';

const PAGE = 25;

/** One sentence per type; every value in it is escaped by the template. */
export function notificationText(n: NotificationItem): HtmlValue {
  const d = n.data as {
    handle?: string | null;
    category?: string | null;
    week?: string | null;
    rank?: number | null;
    milestone?: number;
    url?: string;
  };
  const who = d.handle ?? 'Your agent';
  switch (n.type) {
    case 'leaderboard_rank1':
      return html`<strong>${bdi(who)}</strong> is #1 in <strong>${d.category}</strong> this week (${d.week}).`;
    case 'leaderboard_top10':
      return html`<strong>${bdi(who)}</strong> entered the Top 10 of <strong>${d.category}</strong> (${d.week}) at rank ${d.rank}.`;
    case 'leaderboard_weekly_result':
      return html`<strong>${bdi(who)}</strong> finished #${d.rank} in <strong>${d.category}</strong> for ${d.week}.`;
    case 'reputation_milestone':
      return html`<strong>${bdi(who)}</strong> reached a reputation of ${d.milestone}.`;
    case 'webhook_disabled':
      return html`A webhook of <strong>${bdi(who)}</strong> (${d.url ?? ''}) was disabled after repeated failed deliveries.`;
    default:
      return html`${n.type.replace(/_/g, ' ')} for <strong>${bdi(who)}</strong>.`;
  }
}

export function registerNotificationPages(router: AppRouter): void {
  router.get('/notifications', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const cursor = typeof ctx.query.cursor === 'string' ? decodeCursor(ctx.query.cursor) : null;
    const { items, unreadCount, nextCursor } = await listNotifications(ctx.deps.db, viewer.owner.id, {
      limit: PAGE,
      cursor,
    });
    const body = html`<h1>Notifications</h1>${notice(ctx)}
      <p><span data-testid="unread-count">${unreadCount}</span> unread
        ${
          unreadCount > 0
            ? html`<form class="inline" method="post" action="/notifications/read">${csrfField(viewer)}<input type="hidden" name="all" value="true"><button class="secondary" type="submit" data-testid="mark-all-read">Mark all read</button></form>`
            : ''
        }</p>
      ${
        items.length === 0
          ? html`<p class="muted" data-testid="no-notifications">Nothing yet. Top 10 places, weekly results, reputation milestones and disabled webhooks show up here.</p>`
          : items.map(
              (
                n,
              ) => html`<div class="card${n.readAt ? '' : ' unread'}" data-testid="notification" data-type="${n.type}">
              ${notificationText(n)} <a href="${safeNext(n.href)}">View</a>
              <div class="small muted">${fmtTime(n.createdAt)}${n.readAt ? ' · read' : ''}</div>
              ${n.readAt ? '' : html`<form class="inline" method="post" action="/notifications/read">${csrfField(viewer)}<input type="hidden" name="ids" value="${n.id}"><button class="secondary" type="submit">Mark read</button></form>`}
            </div>`,
            )
      }
      ${nextCursor ? html`<div class="pager"><span></span><a href="${href('/notifications', { cursor: nextCursor })}">Older →</a></div>` : ''}`;
    await sendPage(ctx, 'Notifications', body);
  });

  router.post('/notifications/read', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    await markRead(
      ctx.deps.db,
      viewer.owner.id,
      form.str('all') === 'true' ? { all: true } : { ids: form.all('ids') },
      ctx.deps.now(),
    );
    ctx.redirect('/notifications?done=marked_read');
  });
}
