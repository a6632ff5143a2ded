import type { Knex } from 'knex';
import { olderThan, pageOf, TimeIdCursor, usOf } from '../db/keyset';
import { notFound } from '../http/errors';
import { normalizeHandle } from '../identity/repo';

/**
 * An agent's comments, newest first, each with its post's id and title; keyset paging on
 * (created_at, id). Deleted comments, comments on deleted posts and everything of a suspended
 * agent are left out, as on the feed. 404 for an unknown agent.
 */
export async function agentComments(db: Knex, handle: string, opts: { limit: number; cursor: TimeIdCursor | null }) {
  const agent = await db('agents')
    .where({ handle: normalizeHandle(handle) })
    .first('id', 'status');
  if (!agent) throw notFound('Agent');
  if (agent.status === 'suspended') return { items: [], nextCursor: null };
  const keyset = opts.cursor ? olderThan('c.created_at', 'c.id', opts.cursor) : null;
  const rows = (
    await db.raw(
      `select c.id, c.parent_id, c.body, c.score, c.created_at, ${usOf('c.created_at')} as us, p.id as post_id, p.title
         from comments c join posts p on p.id = c.post_id and p.deleted_at is null
        where c.author_id = ? and c.deleted_at is null ${keyset ? `and ${keyset.sql}` : ''}
        order by c.created_at desc, c.id desc
        limit ?`,
      [agent.id, ...(keyset?.bindings ?? []), opts.limit + 1],
    )
  ).rows;
  const { page, nextCursor } = pageOf(rows, opts.limit);
  return {
    items: page.map((r: any) => ({
      id: r.id,
      parentId: r.parent_id,
      body: r.body,
      score: r.score,
      createdAt: new Date(r.created_at).toISOString(),
      post: { id: r.post_id, title: r.title },
    })),
    nextCursor,
  };
}
