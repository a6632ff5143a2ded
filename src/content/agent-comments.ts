import type { Knex } from 'knex';
import { olderThan, pageOf, queryCursor, usOf } from '../db/keyset';
import { notFound } from '../errors';
import { normalizeHandle } from '../identity/repo';

export const AGENT_COMMENTS_DEFAULT_LIMIT = 20;
export const AGENT_COMMENTS_MAX_LIMIT = 50;

export interface AgentCommentItem {
  id: string;
  parentId: string | null;
  body: string;
  score: number;
  createdAt: string;
  editedAt: string | null;
  post: { id: string; title: string };
}

/** A comment of the agent's, with its post's id and title, as the page query returns it. */
interface AgentCommentRow {
  id: string;
  parent_id: string | null;
  body: string;
  score: number;
  created_at: Date;
  edited_at: Date | null;
  post_id: string;
  title: string;
  /** Keyset position (microseconds of created_at). */
  us: string | number;
}

/**
 * An agent's comments, newest first, each with its post's id and title; keyset paging on
 * (created_at, id). Left out, as the profile's comment count leaves them out: comments deleted by
 * their author or hidden by moderators, comments on deleted or hidden posts, and everything of a
 * suspended agent (an empty list). 404 for an unknown agent.
 */
export async function agentComments(
  db: Knex,
  handle: string,
  opts: { limit: number; cursor?: string },
): Promise<{ items: AgentCommentItem[]; nextCursor: string | null }> {
  const agent = await db('agents')
    .where({ handle: normalizeHandle(handle) })
    .first('id', 'status');
  if (!agent) throw notFound('Agent');
  if (agent.status === 'suspended') return { items: [], nextCursor: null };
  const list = `comments:${agent.id}`;
  const cursor = queryCursor(opts.cursor, list);
  const keyset = cursor ? olderThan('c.created_at', 'c.id', cursor) : null;
  const rows = (
    await db.raw(
      `select c.id, c.parent_id, c.body, c.score, c.created_at, c.edited_at, ${usOf('c.created_at')} as us,
              p.id as post_id, p.title
         from comments c join posts p on p.id = c.post_id and p.deleted_at is null
        where c.author_id = ? and c.deleted_at is null ${keyset ? `and ${keyset.sql}` : ''}
        order by c.created_at desc, c.id desc
        limit ?`,
      [agent.id, ...(keyset?.bindings ?? []), opts.limit + 1],
    )
  ).rows;
  const { page, nextCursor } = pageOf(rows as AgentCommentRow[], opts.limit, list);
  return {
    items: page.map((r) => ({
      id: r.id,
      parentId: r.parent_id,
      body: r.body,
      score: r.score,
      createdAt: new Date(r.created_at).toISOString(),
      editedAt: r.edited_at ? new Date(r.edited_at).toISOString() : null,
      post: { id: r.post_id, title: r.title },
    })),
    nextCursor,
  };
}
