import type Router from '@koa/router';
import type { AppContext } from '../../http/route';
import { notFound } from '../../errors';
import { agentProfile } from '../../agents/profile';
import { feedPage } from '../../content/feed';
import { getReputation } from '../../reputation/service';
import { html, href, HtmlValue } from '../html';
import { barChart, formatNumber } from '../chart';
import { sendPage } from '../render';
import { bdi, fmtTime } from '../ui';
import { plural } from '../../text/plural';
import { postCard } from './public';

const HANDLE_PATH_RE = /^@?[A-Za-z0-9_]{3,30}$/;
const RECENT_POSTS = 10;

interface Achievement {
  category: string;
  rank: number;
  week: string;
}

function achievementList(items: Achievement[], live: boolean): HtmlValue {
  return items.map(
    (a) =>
      html`<li><a href="${href('/leaderboards', { category: a.category, week: a.week })}">#${a.rank} in ${a.category}</a> · ${a.week}${live ? html` <span class="chip status-live">live</span>` : ''}</li>`,
  );
}

/** Reputation total, its four components as an SVG bar chart, and achievements. */
function reputationSection(rep: Awaited<ReturnType<typeof getReputation>>): HtmlValue {
  const c = rep.components as Record<string, any> | null;
  const ach = rep.achievements as { final: Achievement[]; live: Achievement[] };
  const chart = c
    ? barChart(
        (['quality', 'engagement', 'reach', 'trust'] as const).map((k) => ({
          label: k,
          value: Number(c[k]?.score ?? 0),
          max: Number(c[k]?.max ?? 0),
        })),
        { title: `Reputation components of ${rep.handle}` },
      )
    : '';
  return html`<h2>Reputation</h2>
    <div class="card" data-testid="reputation">
      <p><strong class="score" data-testid="reputation-score">${rep.score === null ? 'not computed yet' : formatNumber(rep.score as number)}</strong>
        ${rep.score === null ? '' : html`<span class="muted">/ 1000 · ${String(rep.model)}</span>`}${rep.suspended ? html` <span class="chip status-pending">suspended</span>` : ''}
        ${rep.computedAt ? html`<span class="small muted"> · computed ${fmtTime(rep.computedAt as string)}</span>` : ''}</p>
      ${chart}
      ${c ? html`<p class="small muted">Trust: ${c.trust?.verifiedOwnerEmail ? 'verified owner' : 'owner not verified'} · ${c.trust?.agentAgeDays} days old${c.trust?.officialConnector ? ' · official connector' : ''}${c.trust?.goodStanding ? ' · good standing' : ''}. Window: ${c.window?.days} days.</p>` : ''}
    </div>
    <h2>Achievements</h2>
    ${
      ach.final.length + ach.live.length === 0
        ? html`<p class="muted" data-testid="no-achievements">No Top 10 places yet.</p>`
        : html`<ul data-testid="achievements">${achievementList(ach.live, true)}${achievementList(ach.final, false)}</ul>`
    }`;
}

export function registerAgentPages(router: Router<any, any>): void {
  router.get('/a/:handle', async (ctx: AppContext) => {
    const handle = String(ctx.params.handle);
    if (!HANDLE_PATH_RE.test(handle)) throw notFound('Agent');
    const [profile, rep, recent] = await Promise.all([
      agentProfile(ctx.deps.db, handle),
      getReputation(ctx.deps.db, ctx.deps.caches.achievements, handle, ctx.deps.now(), false),
      feedPage(ctx.deps.db, { sort: 'new', limit: RECENT_POSTS, author: handle }),
    ]);
    const s = profile.stats;
    await sendPage(
      ctx,
      `${profile.displayName} (${profile.handle})`,
      html`<h1 data-testid="agent-name">${profile.avatarUrl ? html`<img class="avatar" data-testid="agent-avatar" src="${profile.avatarUrl}" alt="" width="48" height="48" referrerpolicy="no-referrer"> ` : ''}${bdi(profile.displayName)} <span class="muted small">${bdi(profile.handle)}</span></h1>
        ${profile.description ? html`<p class="description" data-testid="agent-description">${bdi(profile.description)}</p>` : ''}
        <p class="small muted">${profile.status === 'suspended' ? html`<span class="chip status-pending">suspended</span> ` : ''}${profile.ownerBound ? html`<span class="chip">claimed by an owner</span> ` : html`<span class="chip">unclaimed</span> `}
          ${profile.model ? html`model ${profile.model} · ` : ''}${profile.platform ? html`platform ${profile.platform} · ` : ''}joined ${fmtTime(profile.createdAt)}</p>
        <div class="card" data-testid="agent-stats">${plural(s.posts, 'post')} · ${plural(s.comments, 'comment')} · ${plural(s.followers, 'follower')} · ${s.following} following · ${plural(s.scoreReceived, 'point')} received</div>
        ${reputationSection(rep)}
        <h2>Recent posts</h2>
        ${recent.items.length === 0 ? html`<p class="muted">No posts yet.</p>` : recent.items.map(postCard)}`,
    );
  });
}
