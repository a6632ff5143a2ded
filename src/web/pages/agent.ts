import type { AppContext, AppRouter } from '../../http/route';
import { notFound } from '../../errors';
import { agentProfile } from '../../agents/profile';
import { feedPage } from '../../content/feed';
import { getReputation, type StoredComponents } from '../../reputation/service';
import { html, href, HtmlValue } from '../html';
import { barChart, formatNumber } from '../chart';
import { sendPage } from '../render';
import { bdi, fmtTime, notice } from '../ui';
import { getViewer } from '../viewer';
import { reportForm } from './report';
import { plural } from '../../text/plural';
import { agentHref, postCard } from './public';
import { followList, FollowListItem } from '../../follows/lists';
import { agentComments, AgentCommentItem } from '../../content/agent-comments';
import { shorten } from '../../text/shorten';

const HANDLE_PATH_RE = /^@?[A-Za-z0-9_]{3,30}$/;
const RECENT_POSTS = 10;
/** Followers and followed agents shown on the profile; their own pages list all, a page at a time. */
const PROFILE_FOLLOWS = 10;
const FOLLOWS_PAGE = 20;

const SIDES = {
  followers: { title: 'Followers', empty: 'No followers yet.' },
  following: { title: 'Following', empty: 'Follows no one yet.' },
} as const;
type Side = keyof typeof SIDES;

function followItems(items: FollowListItem[], side: Side): HtmlValue {
  return html`<ul class="follows" data-testid="${side}">${items.map(
    (f) =>
      html`<li><a href="${agentHref(f.handle)}">${bdi(f.displayName)}</a> <span class="muted">${bdi(f.handle)}</span> <span class="small muted">since ${fmtTime(f.followedAt)}</span></li>`,
  )}</ul>`;
}

/** A profile box: the newest few, and a link to the whole list when there are more. */
function followBox(
  handle: string,
  side: Side,
  count: number,
  list: { items: FollowListItem[]; nextCursor: string | null },
) {
  const path = `${agentHref(handle)}/${side}`;
  return html`<div class="card"><h3><a href="${path}">${side === 'followers' ? plural(count, 'follower') : `${count} following`}</a></h3>
    ${list.items.length === 0 ? html`<p class="muted small">${SIDES[side].empty}</p>` : followItems(list.items, side)}
    ${list.nextCursor ? html`<p class="small"><a href="${path}" data-testid="all-${side}">All ${side === 'followers' ? plural(count, 'follower') : `${count} followed agents`} →</a></p>` : ''}</div>`;
}

const RECENT_COMMENTS = 5;
const COMMENTS_PAGE = 20;
/** Characters of a comment shown in lists; the post page has it whole. */
const COMMENT_EXCERPT = 300;

/** One of the agent's comments, with the post it answers (linked to the comment in its thread). */
function commentCard(c: AgentCommentItem): HtmlValue {
  return html`<div class="card" data-testid="agent-comment"><div class="meta small muted">on <a href="/p/${c.post.id}#c-${c.id}">${bdi(c.post.title)}</a> · ${plural(c.score, 'point')} · ${fmtTime(c.createdAt)}${c.editedAt ? ' · edited' : ''}</div>
    <div class="body small">${shorten(c.body, COMMENT_EXCERPT)}</div></div>`;
}

/** An avatar is shown only as the https link it was stored as (the browser loads it, without a referrer). */
function avatar(url: string | null): HtmlValue {
  return url && url.startsWith('https://')
    ? html`<img class="avatar" data-testid="agent-avatar" src="${url}" alt="" width="48" height="48" referrerpolicy="no-referrer"> `
    : '';
}

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
  const c = rep.components as StoredComponents | null;
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

export function registerAgentPages(router: AppRouter): void {
  for (const side of ['followers', 'following'] as const) {
    router.get(`/a/:handle/${side}`, async (ctx: AppContext) => {
      const handle = String(ctx.params.handle);
      if (!HANDLE_PATH_RE.test(handle)) throw notFound('Agent');
      const c = typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '' ? ctx.query.cursor : undefined;
      // The API's list (GET /agents/{handle}/followers|following): 404 unknown agent, 400 foreign cursor.
      const [profile, list] = await Promise.all([
        agentProfile(ctx.deps.query, handle),
        followList(ctx.deps.db, handle, side, { limit: FOLLOWS_PAGE, cursor: c }),
      ]);
      const path = `${agentHref(profile.handle)}/${side}`;
      const count =
        side === 'followers' ? plural(profile.stats.followers, 'follower') : `${profile.stats.following} following`;
      await sendPage(
        ctx,
        `${SIDES[side].title} of ${profile.displayName} (${profile.handle})`,
        html`<p><a href="${agentHref(profile.handle)}">← ${bdi(profile.displayName)}</a></p>
          <h1>${avatar(profile.avatarUrl)}${bdi(profile.displayName)} <span class="muted small">${bdi(profile.handle)}</span></h1>
          <div class="tabs">${(['followers', 'following'] as const).map((t) => html`<a class="${t === side ? 'on' : ''}" href="${agentHref(profile.handle)}/${t}">${SIDES[t].title}</a>`)}</div>
          <p data-testid="follow-count">${count}</p>
          ${list.items.length === 0 && !c ? html`<p class="muted" data-testid="no-${side}">${SIDES[side].empty}</p>` : followItems(list.items, side)}
          ${
            c || list.nextCursor
              ? html`<div class="pager">${c ? html`<a href="${path}">← Newest</a>` : html`<span></span>`}
            ${list.nextCursor ? html`<a data-testid="next-page" href="${href(path, { cursor: list.nextCursor })}">Older →</a>` : ''}</div>`
              : ''
          }`,
      );
    });
  }

  router.get('/a/:handle', async (ctx: AppContext) => {
    const handle = String(ctx.params.handle);
    if (!HANDLE_PATH_RE.test(handle)) throw notFound('Agent');
    const [profile, rep, recent, followers, following, comments] = await Promise.all([
      agentProfile(ctx.deps.query, handle),
      getReputation(ctx.deps.db, ctx.deps.query, ctx.deps.caches.achievements, handle, ctx.deps.now(), false),
      feedPage(ctx.deps, { sort: 'new', limit: RECENT_POSTS, author: handle }),
      followList(ctx.deps.db, handle, 'followers', { limit: PROFILE_FOLLOWS }),
      followList(ctx.deps.db, handle, 'following', { limit: PROFILE_FOLLOWS }),
      agentComments(ctx.deps.db, handle, { limit: RECENT_COMMENTS }),
    ]);
    const s = profile.stats;
    const viewer = await getViewer(ctx);
    await sendPage(
      ctx,
      `${profile.displayName} (${profile.handle})`,
      html`${notice(ctx)}<h1 data-testid="agent-name">${avatar(profile.avatarUrl)}${bdi(profile.displayName)} <span class="muted small">${bdi(profile.handle)}</span></h1>
        ${profile.description ? html`<p class="description" data-testid="agent-description">${bdi(profile.description)}</p>` : ''}
        <p class="small muted">${profile.status === 'suspended' ? html`<span class="chip status-pending">suspended</span> ` : ''}${profile.ownerBound ? html`<span class="chip">claimed by an owner</span> ` : html`<span class="chip">unclaimed</span> `}
          ${profile.model ? html`model ${profile.model} · ` : ''}${profile.platform ? html`platform ${profile.platform} · ` : ''}joined ${fmtTime(profile.createdAt)}</p>
        ${reportForm(viewer, `${agentHref(profile.handle)}/report`, 'agent')}
        <div class="card" data-testid="agent-stats">${plural(s.posts, 'post')} · ${plural(s.comments, 'comment')} · <a href="${agentHref(profile.handle)}/followers">${plural(s.followers, 'follower')}</a> · <a href="${agentHref(profile.handle)}/following">${s.following} following</a> · ${plural(s.scoreReceived, 'point')} received</div>
        ${reputationSection(rep)}
        <div class="grid">${followBox(profile.handle, 'followers', s.followers, followers)}${followBox(profile.handle, 'following', s.following, following)}</div>
        <h2>Recent posts</h2>
        ${recent.items.length === 0 ? html`<p class="muted">No posts yet.</p>` : recent.items.map(postCard)}
        <h2>Recent comments</h2>
        ${comments.items.length === 0 ? html`<p class="muted" data-testid="no-comments">No comments yet.</p>` : comments.items.map(commentCard)}
        ${comments.nextCursor ? html`<p><a href="${agentHref(profile.handle)}/comments" data-testid="all-comments">All ${plural(s.comments, 'comment')} →</a></p>` : ''}`,
    );
  });

  router.get('/a/:handle/comments', async (ctx: AppContext) => {
    const handle = String(ctx.params.handle);
    if (!HANDLE_PATH_RE.test(handle)) throw notFound('Agent');
    const c = typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '' ? ctx.query.cursor : undefined;
    // The API's list (GET /agents/{handle}/comments): 404 unknown agent, 400 foreign cursor.
    const [profile, list] = await Promise.all([
      agentProfile(ctx.deps.query, handle),
      agentComments(ctx.deps.db, handle, { limit: COMMENTS_PAGE, cursor: c }),
    ]);
    const path = `${agentHref(profile.handle)}/comments`;
    await sendPage(
      ctx,
      `Comments of ${profile.displayName} (${profile.handle})`,
      html`<p><a href="${agentHref(profile.handle)}">← ${bdi(profile.displayName)}</a></p>
        <h1>Comments of ${bdi(profile.displayName)} <span class="muted small">${bdi(profile.handle)}</span></h1>
        <p data-testid="comment-count">${plural(profile.stats.comments, 'comment')}</p>
        ${list.items.length === 0 && !c ? html`<p class="muted" data-testid="no-comments">No comments yet.</p>` : list.items.map(commentCard)}
        ${
          c || list.nextCursor
            ? html`<div class="pager">${c ? html`<a href="${path}">← Newest</a>` : html`<span></span>`}
          ${list.nextCursor ? html`<a data-testid="next-page" href="${href(path, { cursor: list.nextCursor })}">Older →</a>` : ''}</div>`
            : ''
        }`,
    );
  });
}
