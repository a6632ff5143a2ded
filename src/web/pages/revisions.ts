import type { AppContext, AppRouter } from '../../http/route';
import { AppError, notFound } from '../../errors';
import { getPost } from '../../content/posts';
import { listRevisions } from '../../content/edits';
import { html, href, HtmlValue } from '../html';
import { sendPage } from '../render';
import { commentOfPost } from '../queries';
import { bdi, fmtTime, uuidParam } from '../ui';

/** Versions shown per page of a revisions view. */
const PAGE = 20;

type Revision = Awaited<ReturnType<typeof listRevisions>>['items'][number];

/** One earlier version: when it was written and replaced, its title and tags (posts), its text. */
export function revisionCard(v: Revision): HtmlValue {
  const r = v as Revision & { title?: string | null; tags?: string[] };
  return html`<div class="card revision" data-testid="revision"><div class="meta small muted">written ${fmtTime(v.writtenAt)} · replaced ${fmtTime(v.replacedAt)}</div>
    ${r.title !== undefined && r.title !== null ? html`<h3>${bdi(r.title)}</h3>` : ''}
    <div class="body">${v.body}</div>
    ${r.tags?.length ? html`<p>${r.tags.map((t: string) => html`<span class="chip">#${t}</span>`)}</p>` : ''}</div>`;
}

/**
 * Earlier versions of a live post or comment, newest first (the list of GET …/revisions). A
 * removed or deleted item has none to show (404, as the API answers).
 */
export async function revisionsOrNone(
  ctx: AppContext,
  kind: 'post' | 'comment',
  id: string,
  limit: number,
  cursor?: string,
): Promise<{ items: Revision[]; nextCursor: string | null }> {
  try {
    return await listRevisions(ctx.deps.db, kind, id, { limit, cursor });
  } catch (e) {
    if (e instanceof AppError && e.code === 'NOT_FOUND') return { items: [], nextCursor: null };
    throw e;
  }
}

function cursorOf(ctx: AppContext): string | undefined {
  const c = ctx.query.cursor;
  return typeof c === 'string' && c !== '' ? c : undefined;
}

async function revisionsPage(ctx: AppContext, kind: 'post' | 'comment', postId: string, commentId?: string) {
  const post = await getPost(ctx.deps.query, postId);
  if (commentId && !(await commentOfPost(ctx.deps.db, postId, commentId))) throw notFound('Comment');
  const cursor = cursorOf(ctx);
  // The API's read: 404 for a deleted or removed item, 400 for a cursor it did not issue.
  const { items, nextCursor } = await listRevisions(ctx.deps.db, kind, commentId ?? postId, {
    limit: PAGE,
    cursor,
  });
  const base = commentId ? `/p/${postId}/comments/${commentId}/revisions` : `/p/${postId}/revisions`;
  const back = commentId ? `/p/${postId}#c-${commentId}` : `/p/${postId}`;
  const body = html`<p><a href="${back}">← ${bdi(post.title)}</a></p>
    <h1>Earlier versions of ${kind === 'post' ? 'this post' : 'this comment'}</h1>
    <p class="small muted">Newest first. Scores, votes and reactions stay with the item across edits.</p>
    ${items.length === 0 ? html`<p class="muted" data-testid="no-revisions">Never edited.</p>` : items.map(revisionCard)}
    ${
      cursor || nextCursor
        ? html`<div class="pager">${cursor ? html`<a href="${base}">← Newest</a>` : html`<span></span>`}
      ${nextCursor ? html`<a data-testid="next-page" href="${href(base, { cursor: nextCursor })}">Older →</a>` : ''}</div>`
        : ''
    }`;
  await sendPage(ctx, `Earlier versions: ${post.title}`, body);
}

export function registerRevisionPages(router: AppRouter): void {
  router.get('/p/:id/revisions', async (ctx: AppContext) => {
    await revisionsPage(ctx, 'post', uuidParam(ctx.params.id, 'Post'));
  });
  router.get('/p/:id/comments/:cid/revisions', async (ctx: AppContext) => {
    await revisionsPage(ctx, 'comment', uuidParam(ctx.params.id, 'Post'), uuidParam(ctx.params.cid, 'Comment'));
  });
}
