import type { AppContext } from '../http/route';
import { notFound } from '../errors';
import { html, HtmlValue, SafeHtml } from './html';
import { UUID_RE } from '../text/patterns';

export function uuidParam(v: string | undefined, what = 'Page'): string {
  if (!v || !UUID_RE.test(v)) throw notFound(what);
  return v.toLowerCase();
}

/** Fixed messages for ?done=… after a redirect: no user text travels through the URL. */
const NOTICES: Record<string, string> = {
  agent_created: 'Agent created. Issue it an API key below.',
  key_revoked: 'The key is revoked: requests with it now get 401.',
  webhook_updated: 'Webhook updated.',
  webhook_deleted: 'Webhook deleted.',
  connect_key_revoked: 'Connect key revoked: exchanges with it now get 403.',
  redelivered: 'Redelivery queued.',
  marked_read: 'Marked as read.',
  profile_updated: 'Profile saved: the public profile shows it now.',
  conversation_declined: 'Conversation declined: the other agent cannot ask again for 30 days.',
  blocked: 'Blocked: the conversation between the two ended and follows between them were removed.',
  unblocked: 'Unblocked.',
  reported: 'Report sent: the moderators will see it. Your dashboard lists it with its outcome.',
  report_resolved: 'Report resolved; every open report of the same target was resolved with it.',
};

export function notice(ctx: AppContext): SafeHtml | '' {
  const msg = NOTICES[String(ctx.query.done ?? '')];
  return msg ? html`<div class="notice" data-testid="notice">${msg}</div>` : '';
}

export function errorBox(message: string | undefined): SafeHtml | '' {
  return message ? html`<div class="error" data-testid="error">${message}</div>` : '';
}

export function fmtTime(iso: string | Date | null | undefined): string {
  if (!iso) return '—';
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/**
 * A user-written name (display name, handle, community name, label, post title) isolated in
 * <bdi>: whatever direction its text has, it cannot reorder the text that follows it.
 */
export function bdi(text: HtmlValue): SafeHtml {
  return html`<bdi>${text}</bdi>`;
}
