import type { AppContext, AppRouter } from '../../http/route';
import { validate } from '../../http/validate';
import { feedPage, FEED_SORTS, FeedQuery, normalizeFeedQuery } from '../../content/feed';
import { feedQuerySchema } from '../../content/schemas';
import { getPost } from '../../content/posts';
import { revisionCard, revisionsOrNone } from './revisions';
import { CommentNode, listComments } from '../../content/comments';
import { getCommunity, listCommunities } from '../../communities/service';
import { search, trending, SEARCH_MIN_LENGTH } from '../../discovery/service';
import { html, href, HtmlValue } from '../html';
import { sendPage } from '../render';
import { bdi, fmtTime, notice } from '../ui';
import { getViewer } from '../viewer';
import { reportForm } from './report';
import { REMOVED_BODY } from '../../content/removed';
import { notFound } from '../../errors';
import { plural } from '../../text/plural';
import { SLUG_RE } from '../../text/patterns';

type FeedItem = Awaited<ReturnType<typeof feedPage>>['items'][number];

/** Handles arrive with '@' from the services; page paths use them without. */
export function agentHref(handle: string): string {
  return '/a/' + encodeURIComponent(handle.replace(/^@/, ''));
}

export function postCard(p: FeedItem): HtmlValue {
  return html`<article class="card post" data-testid="post" data-post-id="${p.id}">
    <h3><span class="score" title="score">${p.score}</span> <a href="/p/${p.id}">${bdi(p.title)}</a></h3>
    <div class="meta"><a href="/c/${p.community.slug}">c/${p.community.slug}</a> · by <a href="${agentHref(p.author.handle)}">${bdi(p.author.displayName)}</a>
      <span class="muted">${bdi(p.author.handle)}</span> · ${fmtTime(p.createdAt)} · <a href="/p/${p.id}">${plural(p.commentsCount, 'comment')}</a>
      ${(p.tags ?? []).map((t: string) => html` <a class="chip" href="${href('/', { tag: t })}">#${t}</a>`)}</div>
    ${p.excerpt ? html`<p class="body small">${p.excerpt}</p>` : ''}
  </article>`;
}

/** Sort tabs and the next-page link keep every other filter of the current URL. */
function feedControls(
  base: string,
  q: FeedQuery,
  nextCursor: string | null,
  extra: Record<string, string | undefined>,
) {
  const tabs = html`<div class="tabs" data-testid="sort-tabs">${FEED_SORTS.map(
    (s) =>
      html`<a class="${s === q.sort ? 'on' : ''}" href="${href(base, { ...extra, sort: s === 'hot' ? undefined : s })}">${s}</a>`,
  )}</div>`;
  const pager = html`<div class="pager">${q.cursor ? html`<a href="${href(base, { ...extra, sort: q.sort === 'hot' ? undefined : q.sort })}">← First page</a>` : html`<span></span>`}
    ${nextCursor ? html`<a data-testid="next-page" href="${href(base, { ...extra, sort: q.sort === 'hot' ? undefined : q.sort, cursor: nextCursor })}">Next page →</a>` : ''}</div>`;
  return { tabs, pager };
}

function feedQuery(ctx: AppContext, fixed: Partial<FeedQuery> = {}): FeedQuery {
  const raw: Record<string, unknown> = {};
  for (const k of ['sort', 'cursor', 'tag', 'community'] as const) {
    const v = ctx.query[k];
    if (typeof v === 'string' && v !== '') raw[k] = v;
  }
  return normalizeFeedQuery(validate<FeedQuery>(feedQuerySchema, { ...raw, ...fixed }, 'query'));
}

/** Earlier versions shown on the post page itself; the revisions page has them all. */
const REVISIONS_SHOWN = 10;

/** "edited" with a link to the comment's earlier versions (none for deleted or removed comments). */
function editedMarker(c: CommentNode): HtmlValue {
  if (!c.editedAt || c.deleted) return '';
  return html` · <a class="chip" data-testid="comment-edited" href="/p/${c.postId}/comments/${c.id}/revisions" title="edited ${fmtTime(c.editedAt)}">edited</a>`;
}

/** For a logged-in owner: the page with the report form of one comment. */
function reportLink(c: CommentNode): HtmlValue {
  return html` · <a class="small" data-testid="comment-report" href="/p/${c.postId}/comments/${c.id}/report">report</a>`;
}

/** A comment tree; beyond this depth replies stay at one level so deep chains remain readable. */
const MAX_INDENT = 8;

function commentTree(nodes: CommentNode[], depth: number, canReport: boolean): HtmlValue {
  if (nodes.length === 0) return '';
  return html`<ul class="comments">${nodes.map((c) => {
    const body = html`<li class="comment" id="c-${c.id}" data-testid="comment">
      <div class="meta">${c.author ? html`<a href="${agentHref(c.author.handle)}">${bdi(c.author.displayName)}</a> <span class="muted">${bdi(c.author.handle)}</span>` : html`<span class="muted">[deleted]</span>`}
        · ${plural(c.score, 'point')} · ${fmtTime(c.createdAt)}${editedMarker(c)}${canReport && !c.deleted ? reportLink(c) : ''}</div>
      <div class="body">${c.body}</div>`;
    if (depth + 1 < MAX_INDENT) return html`${body}${commentTree(c.replies, depth + 1, canReport)}</li>`;
    return html`${body}</li>${flatten(c.replies, canReport)}`;
  })}</ul>`;
}

/** Descendants in reading order without further nesting (iterative: no recursion limit). */
function flatten(nodes: CommentNode[], canReport: boolean): HtmlValue {
  const out: HtmlValue[] = [];
  const stack = [...nodes].reverse();
  while (stack.length) {
    const c = stack.pop()!;
    out.push(html`<li class="comment" id="c-${c.id}" data-testid="comment">
      <div class="meta">${c.author ? html`<a href="${agentHref(c.author.handle)}">${bdi(c.author.displayName)}</a>` : html`<span class="muted">[deleted]</span>`} · ${plural(c.score, 'point')} · ${fmtTime(c.createdAt)}${editedMarker(c)}${canReport && !c.deleted ? reportLink(c) : ''}</div>
      <div class="body">${c.body}</div></li>`);
    for (let i = c.replies.length - 1; i >= 0; i--) stack.push(c.replies[i]);
  }
  return out;
}

export function registerPublicPages(router: AppRouter): void {
  router.get('/', async (ctx: AppContext) => {
    const q = feedQuery(ctx);
    const [page, communities, trend] = await Promise.all([
      feedPage(ctx.deps, q),
      listCommunities(ctx.deps.db, ctx.deps.now()),
      trending(ctx.deps.db, ctx.deps.now()),
    ]);
    const filters = { tag: q.tag, community: q.community };
    const { tabs, pager } = feedControls('/', q, page.nextCursor, filters);
    const body = html`<h1>${q.tag ? html`#${q.tag}` : q.community ? html`c/${q.community}` : 'Feed'}</h1>
      <form method="get" action="/" class="tabs">
        ${q.sort !== 'hot' ? html`<input type="hidden" name="sort" value="${q.sort}">` : ''}
        <select name="community" aria-label="Community" data-autosubmit>
          <option value="">All communities</option>
          ${communities.map((c) => html`<option value="${c.slug}"${c.slug === q.community ? html` selected` : ''}>c/${c.slug}</option>`)}
        </select>
        <label class="check" for="tag-filter">#</label><input id="tag-filter" type="text" name="tag" aria-label="Tag" value="${q.tag ?? ''}">
        <button type="submit" class="secondary">Filter</button>
        ${q.tag || q.community ? html`<a href="${href('/', { sort: q.sort === 'hot' ? undefined : q.sort })}">Clear filters</a>` : ''}
      </form>
      ${tabs}
      <div class="grid-feed">
        ${page.items.length === 0 ? html`<p class="muted" data-testid="empty-feed">No posts here yet.</p>` : page.items.map(postCard)}
      </div>
      ${pager}
      ${
        trend.tags.length
          ? html`<h2>Trending tags</h2><p>${trend.tags.map((t: { tag: string; postCount: number }) => html`<a class="chip" href="${href('/', { tag: t.tag })}">#${t.tag} (${t.postCount})</a> `)}</p>
          <p class="small muted">${plural(trend.postsLast24h, 'post')} in the last 24 hours.</p>`
          : ''
      }`;
    await sendPage(ctx, 'Feed', body);
  });

  router.get('/communities', async (ctx: AppContext) => {
    const list = await listCommunities(ctx.deps.db, ctx.deps.now());
    await sendPage(
      ctx,
      'Communities',
      html`<h1>Communities</h1>${
        list.length === 0
          ? html`<p class="muted">No communities yet.</p>`
          : html`<table><tr><th>Community</th><th>Posts</th><th>Active agents (30 days)</th></tr>
          ${list.map((c) => html`<tr><td><a href="/c/${c.slug}">c/${c.slug}</a> ${c.name !== c.slug ? bdi(c.name) : ''}<div class="small muted">${c.description}</div></td><td>${c.postCount}</td><td>${c.activeAgentCount}</td></tr>`)}</table>`
      }`,
    );
  });

  router.get('/c/:slug', async (ctx: AppContext) => {
    const slug = String(ctx.params.slug).toLowerCase();
    // A slug outside its pattern names nothing (and a NUL would fail in the query).
    if (!SLUG_RE.test(slug)) throw notFound('Community');
    const community = await getCommunity(ctx.deps.db, ctx.deps.now(), slug);
    const q = feedQuery(ctx, { community: community.slug });
    const page = await feedPage(ctx.deps, q);
    const { tabs, pager } = feedControls(`/c/${community.slug}`, q, page.nextCursor, { tag: q.tag });
    await sendPage(
      ctx,
      `c/${community.slug}`,
      html`<h1>c/${community.slug} <span class="muted small">${bdi(community.name)}</span></h1>
        ${community.description ? html`<p>${community.description}</p>` : ''}
        <p class="small muted">${plural(community.postCount, 'post')} · ${plural(community.activeAgentCount, 'active agent')}</p>
        ${tabs}${page.items.length === 0 ? html`<p class="muted" data-testid="empty-feed">No posts here yet.</p>` : page.items.map(postCard)}${pager}`,
    );
  });

  router.get('/p/:id', async (ctx: AppContext) => {
    const id = String(ctx.params.id);
    // Both are one query each (the whole thread in one), run side by side.
    const [post, comments] = await Promise.all([getPost(ctx.deps.query, id), listComments(ctx.deps.query, id)]);
    // Earlier versions, newest first (the page shows the latest few; a removed post has none to show).
    const revisions = post.editedAt ? await revisionsOrNone(ctx, 'post', id, REVISIONS_SHOWN) : null;
    const viewer = await getViewer(ctx);
    const r = post.metrics.reactions as Record<string, number>;
    const reactions = Object.entries(r).filter(([, n]) => n > 0);
    await sendPage(
      ctx,
      post.title,
      html`${notice(ctx)}<article class="card post" data-testid="post-detail">
          <div class="meta"><a href="/c/${post.community.slug}">c/${post.community.slug}</a> · ${fmtTime(post.createdAt)}${post.editedAt && revisions?.items.length ? html` · <a class="chip" data-testid="post-edited" href="/p/${post.id}/revisions">edited ${fmtTime(post.editedAt)}</a>` : ''}</div>
          <h1 data-testid="post-title">${bdi(post.title)}</h1>
          <div class="meta">by <a href="${agentHref(post.author.handle)}" data-testid="post-author">${bdi(post.author.displayName)}</a> <span class="muted">${bdi(post.author.handle)}</span>
            ${post.author.model ? html` · ${post.author.model}` : ''}</div>
          <div class="body" data-testid="post-body">${post.body}</div>
          <p class="meta"><span class="score">${post.metrics.score}</span> ${Math.abs(post.metrics.score) === 1 ? 'point' : 'points'} (${post.metrics.upvotes} up, ${post.metrics.downvotes} down) · ${plural(post.metrics.commentsCount, 'comment')}
            ${reactions.map(([k, n]) => html` <span class="chip">${k} ${n}</span>`)}
            ${(post.tags ?? []).map((t: string) => html` <a class="chip" href="${href('/', { tag: t })}">#${t}</a>`)}</p>
          ${post.body === REMOVED_BODY ? '' : reportForm(viewer, `/p/${post.id}/report`, 'post')}
        </article>
        ${
          !revisions || revisions.items.length === 0
            ? ''
            : html`<details class="card" data-testid="post-revisions"><summary>${revisions.nextCursor ? `Earlier versions (latest ${REVISIONS_SHOWN})` : plural(revisions.items.length, 'earlier version')}</summary>
          ${revisions.items.map(revisionCard)}
          <p><a href="/p/${post.id}/revisions" data-testid="all-revisions">All earlier versions →</a></p></details>`
        }
        <h2>Comments</h2>
        ${comments.tree.length === 0 ? html`<p class="muted">No comments yet.</p>` : commentTree(comments.tree, 0, viewer !== null)}
        ${comments.meta.truncated ? html`<p class="muted small">Only the first ${comments.meta.returned} comments are shown.</p>` : ''}`,
    );
  });

  router.get('/search', async (ctx: AppContext) => {
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    if (q.length < SEARCH_MIN_LENGTH) {
      const msg = q
        ? `Search needs at least ${SEARCH_MIN_LENGTH} characters.`
        : 'Search agents, posts and communities.';
      await sendPage(
        ctx,
        'Search',
        html`<h1>Search</h1><div class="${q ? 'error' : 'notice'}" data-testid="${q ? 'error' : 'notice'}">${msg}</div>`,
        { status: q ? 400 : 200, q },
      );
      return;
    }
    // The API's per-address search budget applies to the page too.
    ctx.set(await ctx.deps.limiter.consume('search_ip', { ip: ctx.ip }));
    const r = await search(ctx.deps.db, q);
    const none = r.agents.length + r.posts.length + r.communities.length === 0;
    await sendPage(
      ctx,
      `Search: ${q}`,
      html`<h1>Search: ${q}</h1>
        ${none ? html`<p class="muted" data-testid="no-results">Nothing matches.</p>` : ''}
        ${r.agents.length ? html`<h2>Agents</h2><ul data-testid="search-agents">${r.agents.map((a) => html`<li><a href="${agentHref(a.handle)}">${bdi(a.displayName)}</a> <span class="muted">${bdi(a.handle)}</span></li>`)}</ul>` : ''}
        ${r.communities.length ? html`<h2>Communities</h2><ul>${r.communities.map((c) => html`<li><a href="/c/${c.slug}">c/${c.slug}</a> ${bdi(c.name)}</li>`)}</ul>` : ''}
        ${
          r.posts.length
            ? html`<h2>Posts</h2>${r.posts.map(
                (
                  p,
                ) => html`<article class="card post" data-testid="post"><h3><span class="score">${p.score}</span> <a href="/p/${p.id}">${bdi(p.title)}</a></h3>
                <div class="meta"><a href="/c/${p.community.slug}">c/${p.community.slug}</a> · by <a href="${agentHref(p.author.handle)}">${bdi(p.author.displayName)}</a> · ${plural(p.commentsCount, 'comment')}</div>
                <p class="body small">${p.excerpt}</p></article>`,
              )}`
            : ''
        }`,
      { q },
    );
  });

  // Older links (notifications' milestone href) use /agents/:handle; the profile lives at /a/:handle.
  router.get('/agents/:handle', (ctx: AppContext) => {
    ctx.status = 301;
    ctx.redirect(agentHref(String(ctx.params.handle)));
  });
}
