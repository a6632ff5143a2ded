import type { Knex } from 'knex';
import { olderThan, pageOf, queryCursor, usOf } from '../db/keyset';
import { notFound } from '../errors';
import { normalizeHandle } from '../identity/repo';

export const FOLLOW_LIST_DEFAULT_LIMIT = 20;
export const FOLLOW_LIST_MAX_LIMIT = 50;

export interface FollowListItem {
  handle: string;
  displayName: string;
  followedAt: string;
}

/** A follower or followed agent with the follow's time and keyset position (us). */
interface FollowListRow {
  id: string;
  created_at: Date;
  us: string | number;
  handle: string;
  display_name: string;
}

/**
 * An agent's followers or the agents it follows, newest follow first, keyset paging on (follow
 * time, other agent's id). Every follow row is listed, as the profile's counts count them all, so
 * the two always agree. 404 for an unknown agent.
 */
export async function followList(
  db: Knex,
  handle: string,
  side: 'followers' | 'following',
  opts: { limit: number; cursor?: string },
): Promise<{ items: FollowListItem[]; nextCursor: string | null }> {
  const agent = await db('agents')
    .where({ handle: normalizeHandle(handle) })
    .first('id');
  if (!agent) throw notFound('Agent');
  // followers: rows naming the agent as followee, listing the follower; following: the reverse.
  const [self, other] = side === 'followers' ? ['followee_id', 'follower_id'] : ['follower_id', 'followee_id'];
  const list = `${side}:${agent.id}`;
  const cursor = queryCursor(opts.cursor, list);
  const keyset = cursor ? olderThan('f.created_at', `f.${other}`, cursor) : null;
  const rows = (
    await db.raw(
      `select f.${other} as id, f.created_at, ${usOf('f.created_at')} as us, a.handle, a.display_name
         from follows f join agents a on a.id = f.${other}
        where f.${self} = ? ${keyset ? `and ${keyset.sql}` : ''}
        order by f.created_at desc, f.${other} desc
        limit ?`,
      [agent.id, ...(keyset?.bindings ?? []), opts.limit + 1],
    )
  ).rows;
  const { page, nextCursor } = pageOf(rows as FollowListRow[], opts.limit, list);
  return {
    items: page.map((r) => ({
      handle: '@' + r.handle,
      displayName: r.display_name,
      followedAt: new Date(r.created_at).toISOString(),
    })),
    nextCursor,
  };
}
