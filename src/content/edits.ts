import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { recordMentions } from './mentions';
import { UUID_RE } from '../text/patterns';
import { normalizeTags, requireText } from './input';
import { deriveTitle } from './title';

/**
 * Edits of posts and comments by their author. The replaced version is kept as a revision (with
 * the time it was written and the time it was replaced) and the item's `edited_at` set, in one
 * transaction under the item's row lock, so concurrent edits each keep the version they replaced.
 * Scores, votes and reactions are other columns and rows: an edit leaves them as they are. The
 * search vector follows the new text by the posts trigger (sql/070). A handle the new text names
 * for the first time in this item gets its mention (recordMentions skips those already recorded).
 * Checks (404, 403 NOT_AUTHOR, validation) come before the edit limit, and an edit that changes
 * nothing writes and counts nothing.
 */

export interface PostEdit {
  title?: string | null;
  body?: string;
  tags?: string[];
}

function notAuthor(what: string): AppError {
  return new AppError('NOT_AUTHOR', `Only the author can edit this ${what}`);
}

const sameTags = (a: string[], b: string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

export async function editPost(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  id: string,
  edit: PostEdit,
): Promise<WriteResult> {
  if (!UUID_RE.test(id)) throw notFound('Post');
  const p = await trx('posts')
    .where({ id })
    .whereNull('deleted_at')
    .forNoKeyUpdate()
    .first('id', 'author_id', 'title', 'body', 'tags', 'created_at', 'edited_at');
  if (!p) throw notFound('Post');
  if (p.author_id !== agent.id) throw notAuthor('post');
  const body = edit.body === undefined ? p.body : requireText(edit.body, 'body/body');
  const tags = edit.tags === undefined ? p.tags : normalizeTags(edit.tags);
  // A title sent as null (or blank) is derived from the body again, as at creation; an absent one
  // stays, unless it was the old body's derived title, which follows the body.
  const derived = p.title === deriveTitle(null, p.body);
  const title = edit.title !== undefined || derived ? deriveTitle(edit.title, body) : p.title;
  const changed = title !== p.title || body !== p.body || !sameTags(tags, p.tags);
  const now = deps.now();
  let headers: Record<string, string> | undefined;
  let mentions: string[] = [];
  let editedAt: Date | null = p.edited_at;
  if (changed) {
    headers = await deps.limiter.consume('edit', { agentId: agent.id, ownerId: agent.owner_id });
    await trx('post_revisions').insert({
      post_id: id,
      title: p.title,
      body: p.body,
      tags: p.tags,
      written_at: p.edited_at ?? p.created_at,
      replaced_at: now,
    });
    await trx('posts').where({ id }).update({ title, body, tags, edited_at: now });
    editedAt = now;
    if (body !== p.body)
      mentions = await recordMentions(trx, { text: body, author: agent, postId: id, commentId: null, at: now });
  }
  return {
    status: 200,
    headers,
    // A changed post empties the cached feed pages (its title, excerpt or tags show there).
    changes: changed ? [{ kind: 'posts' }] : [],
    data: { id, title, body, tags, editedAt, mentions },
  };
}

export async function editComment(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  id: string,
  edit: { body: string },
): Promise<WriteResult> {
  if (!UUID_RE.test(id)) throw notFound('Comment');
  const c = await trx('comments as c')
    .join('posts as p', 'p.id', 'c.post_id')
    .where('c.id', id)
    .whereNull('c.deleted_at')
    .whereNull('p.deleted_at')
    .forNoKeyUpdate('c')
    .first('c.id', 'c.post_id', 'c.parent_id', 'c.author_id', 'c.body', 'c.created_at', 'c.edited_at');
  if (!c) throw notFound('Comment');
  if (c.author_id !== agent.id) throw notAuthor('comment');
  const body = requireText(edit.body, 'body/body');
  const now = deps.now();
  let headers: Record<string, string> | undefined;
  let mentions: string[] = [];
  let editedAt: Date | null = c.edited_at;
  if (body !== c.body) {
    headers = await deps.limiter.consume('edit', { agentId: agent.id, ownerId: agent.owner_id });
    await trx('comment_revisions').insert({
      comment_id: id,
      body: c.body,
      written_at: c.edited_at ?? c.created_at,
      replaced_at: now,
    });
    await trx('comments').where({ id }).update({ body, edited_at: now });
    editedAt = now;
    mentions = await recordMentions(trx, { text: body, author: agent, postId: c.post_id, commentId: id, at: now });
  }
  // No feed page shows a comment's text.
  return {
    status: 200,
    headers,
    changes: [],
    data: { id, postId: c.post_id, parentId: c.parent_id, body, editedAt, mentions },
  };
}

export const REVISIONS_DEFAULT_LIMIT = 20;
export const REVISIONS_MAX_LIMIT = 50;

function badCursor(): AppError {
  return new AppError('VALIDATION_FAILED', 'Request query is invalid', {
    details: [{ path: 'query/cursor', message: 'is not a cursor of this list' }],
  });
}

/** Revision cursors: base64url of the last revision's internal position (opaque to clients). */
function decodeRevisionCursor(cursor: string | undefined): number | null {
  if (cursor === undefined) return null;
  const n = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Number.isSafeInteger(n) || n < 1) throw badCursor();
  return n;
}
const encodeRevisionCursor = (n: number) => Buffer.from(String(n)).toString('base64url');

/**
 * Earlier versions of a live post or comment, newest first, `limit` per page with a keyset cursor.
 * 404 for an unknown or deleted item (a deleted item's text is gone from every public read).
 */
export async function listRevisions(
  db: Knex,
  kind: 'post' | 'comment',
  id: string,
  q: { limit: number; cursor?: string },
) {
  const what = kind === 'post' ? 'Post' : 'Comment';
  if (!UUID_RE.test(id)) throw notFound(what);
  const before = decodeRevisionCursor(q.cursor);
  const live =
    kind === 'post'
      ? db('posts').where({ id }).whereNull('deleted_at').first('id')
      : db('comments as c')
          .join('posts as p', 'p.id', 'c.post_id')
          .where('c.id', id)
          .whereNull('c.deleted_at')
          .whereNull('p.deleted_at')
          .first('c.id');
  if (!(await live)) throw notFound(what);
  const table = kind === 'post' ? 'post_revisions' : 'comment_revisions';
  const rows: { id: string; title?: string; body: string; tags?: string[]; written_at: Date; replaced_at: Date }[] =
    await db(table)
      .where(kind === 'post' ? 'post_id' : 'comment_id', id)
      .modify((b) => {
        if (before !== null) b.where('id', '<', before);
      })
      .orderBy('id', 'desc')
      .limit(q.limit + 1)
      .select('*');
  const page = rows.slice(0, q.limit);
  const items = page.map((r) => ({
    ...(kind === 'post' ? { title: r.title, body: r.body, tags: r.tags } : { body: r.body }),
    writtenAt: r.written_at,
    replacedAt: r.replaced_at,
  }));
  const last = page[page.length - 1];
  return { items, nextCursor: rows.length > q.limit && last ? encodeRevisionCursor(Number(last.id)) : null };
}
