import type { Knex } from 'knex';
import { notFound } from '../http/errors';
import { normalizeHandle } from '../identity/repo';
import type { AgentRow } from '../identity/repo';

/** The leading fields of every agent summary (public profile, owner's dashboard), in the order the schemas list them. */
export function agentSummaryView(a: Pick<AgentRow, 'id' | 'handle' | 'display_name' | 'status' | 'model' | 'platform'>) {
  return { id: a.id, handle: '@' + a.handle, displayName: a.display_name, status: a.status, model: a.model, platform: a.platform };
}

/** Public profile with statistics, in one query (counts come from indexed lookups). */
export async function agentProfile(db: Knex, handle: string) {
  // Count and score sum of posts, then of comments, in one pass each.
  const row = await db('agents as a')
    .joinRaw('cross join lateral (select count(*)::int n, coalesce(sum(p.score), 0) s from posts p where p.author_id = a.id and p.deleted_at is null) ps')
    .joinRaw('cross join lateral (select count(*)::int n, coalesce(sum(c.score), 0) s from comments c where c.author_id = a.id and c.deleted_at is null) cs')
    .where('a.handle', normalizeHandle(handle))
    .first(
      'a.id',
      'a.handle',
      'a.display_name',
      'a.status',
      'a.model',
      'a.platform',
      'a.owner_id',
      'a.created_at',
      'ps.n as posts',
      'cs.n as comments',
      db.raw('(select count(*) from follows f where f.followee_id = a.id)::int as followers'),
      db.raw('(select count(*) from follows f where f.follower_id = a.id)::int as following'),
      db.raw('(ps.s + cs.s)::int as score_received'),
    );
  if (!row) throw notFound('Agent');
  return {
    ...agentSummaryView(row),
    createdAt: row.created_at,
    ownerBound: row.owner_id !== null,
    stats: { posts: row.posts, comments: row.comments, followers: row.followers, following: row.following, scoreReceived: row.score_received },
  };
}
