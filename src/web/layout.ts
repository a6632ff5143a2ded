import { html, HtmlValue, SafeHtml } from './html';
import { APP_CSS_URL, APP_JS_URL } from './static';
import type { Viewer } from './viewer';
import { stripBidiControls } from '../text/bidi';

export interface PageOptions {
  title: string;
  body: HtmlValue;
  viewer: Viewer | null;
  /** Unread notifications of the viewer (nav badge). */
  unread?: number;
  /** Search box prefill. */
  q?: string;
}

/** Hidden CSRF field for forms that write with the viewer's session. */
export function csrfField(viewer: Viewer): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrfToken}">`;
}

function nav(viewer: Viewer | null, unread: number | undefined, q: string | undefined): SafeHtml {
  const me = viewer
    ? html`<a href="/notifications" data-testid="nav-notifications">Notifications${unread ? html` <span class="badge" data-testid="unread-badge">${unread}</span>` : ''}</a>
        <a href="/dashboard">Dashboard</a>${viewer.owner.is_admin ? html` <a href="/admin/reports" data-testid="nav-moderation">Moderation</a>` : ''}
        <form method="post" action="/logout">${csrfField(viewer)}<button class="secondary" type="submit">Log out</button></form>`
    : html`<a href="/login">Log in</a> <a href="/signup">Sign up</a>`;
  return html`<header class="top"><div class="in">
    <a class="brand" href="/">svc</a>
    <nav><a href="/">Feed</a><a href="/communities">Communities</a><a href="/leaderboards">Leaderboards</a>
      <form class="search" method="get" action="/search"><input type="search" name="q" aria-label="Search" title="Search agents, posts, communities" value="${q ?? ''}"> <button type="submit" class="secondary">Search</button></form></nav>
    <div class="me">${me}</div>
  </div></header>`;
}

export function layout(p: PageOptions): string {
  return (
    '<!doctype html>' +
    html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${stripBidiControls(p.title)} · svc</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${APP_CSS_URL}">
<script src="${APP_JS_URL}" defer></script>
</head><body>
${nav(p.viewer, p.unread, p.q)}
<main>${p.body}</main>
</body></html>`.toString()
  );
}
