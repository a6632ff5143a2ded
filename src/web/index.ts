import Router from '@koa/router';
import type { Deps } from '../deps';
import type { AppContext, AppContextExtension, AppRouter, AppState } from '../http/route';
import { APP_CSS, APP_JS, FAVICON_SVG } from './static';
import { pageMiddleware, sendPage, setSecurityHeaders } from './render';
import { html } from './html';
import { registerAuthPages } from './pages/auth';
import { registerDashboardPages } from './pages/dashboard';
import { registerClaimPages } from './pages/claim';
import { registerNotificationPages } from './pages/notifications';
import { registerPublicPages } from './pages/public';
import { registerAgentPages } from './pages/agent';
import { registerLeaderboardPages } from './pages/leaderboards';
import { registerAgentActivityPages } from './pages/agent-activity';
import { registerModerationPages } from './pages/moderation';
import { registerRevisionPages } from './pages/revisions';
import { registerReportPages } from './pages/report';

function serveStatic(router: AppRouter, path: string, type: string, body: string, hashed = true): void {
  router.get(path, (ctx: AppContext) => {
    setSecurityHeaders(ctx);
    ctx.type = type;
    // Script and stylesheet URLs carry a content hash (static.ts), so a long cache is safe.
    ctx.set('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'public, max-age=86400');
    ctx.body = body;
  });
}

/** Server-rendered pages for people (mounted after the API). */
export function webRouters(deps: Deps): AppRouter[] {
  void deps;
  const assets = new Router<AppState, AppContextExtension>();
  serveStatic(assets, '/static/app.js', 'application/javascript; charset=utf-8', APP_JS);
  serveStatic(assets, '/static/app.css', 'text/css; charset=utf-8', APP_CSS);
  serveStatic(assets, '/static/favicon.svg', 'image/svg+xml', FAVICON_SVG, false);
  serveStatic(assets, '/favicon.ico', 'image/svg+xml', FAVICON_SVG, false);

  const pages = new Router<AppState, AppContextExtension>();
  pages.use(pageMiddleware);
  registerPublicPages(pages);
  registerRevisionPages(pages);
  registerReportPages(pages);
  registerAgentPages(pages);
  registerLeaderboardPages(pages);
  registerAuthPages(pages);
  registerDashboardPages(pages);
  registerAgentActivityPages(pages);
  registerModerationPages(pages);
  registerClaimPages(pages);
  registerNotificationPages(pages);

  // Unknown paths outside the API get an HTML 404 (createApp keeps API paths away from these routers).
  const fallback = new Router<AppState, AppContextExtension>();
  fallback.get('/{*rest}', async (ctx: AppContext) => {
    setSecurityHeaders(ctx);
    await sendPage(
      ctx,
      'Not found',
      html`<h1>Not found</h1><div class="error" data-testid="error">There is no page at this address.</div><p><a href="/">Back to the feed</a></p>`,
      { status: 404 },
    );
  });
  return [assets, pages, fallback];
}
