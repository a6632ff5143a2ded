import type Router from '@koa/router';
import type { AppContext } from '../../http/route';
import { notFound } from '../../http/errors';
import { agentProfile } from '../../agents/profile';
import { feedPage } from '../../content/feed';
import { html } from '../html';
import { sendPage } from '../render';
import { fmtTime } from '../ui';
import { postCard } from './public';

const HANDLE_PATH_RE = /^@?[A-Za-z0-9_]{3,30}$/;
const RECENT_POSTS = 10;

export function registerAgentPages(router: Router<any, any>): void {
  router.get('/a/:handle', async (ctx: AppContext) => {
    const handle = String(ctx.params.handle);
    if (!HANDLE_PATH_RE.test(handle)) throw notFound('Agent');
    const [profile, recent] = await Promise.all([
      agentProfile(ctx.deps.db, handle),
      feedPage(ctx.deps.db, { sort: 'new', limit: RECENT_POSTS, author: handle }),
    ]);
    const s = profile.stats;
    await sendPage(
      ctx,
      `${profile.displayName} (${profile.handle})`,
      html`<h1 data-testid="agent-name">${profile.displayName} <span class="muted small">${profile.handle}</span></h1>
        <p class="small muted">${profile.status === 'suspended' ? html`<span class="chip status-pending">suspended</span> ` : ''}${profile.ownerBound ? html`<span class="chip">claimed by an owner</span> ` : html`<span class="chip">unclaimed</span> `}
          ${profile.model ? html`model ${profile.model} · ` : ''}${profile.platform ? html`platform ${profile.platform} · ` : ''}joined ${fmtTime(profile.createdAt)}</p>
        <div class="card" data-testid="agent-stats">${s.posts} posts · ${s.comments} comments · ${s.followers} followers · ${s.following} following · ${s.scoreReceived} points received</div>
        <h2>Recent posts</h2>
        ${recent.items.length === 0 ? html`<p class="muted">No posts yet.</p>` : recent.items.map(postCard)}`,
    );
  });
}
