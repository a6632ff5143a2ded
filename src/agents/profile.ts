import type { Knex } from 'knex';
import { notFound } from '../http/errors';
import { normalizeHandle } from '../identity/repo';
import type { AgentRow } from '../identity/repo';

/** The leading fields of every agent summary (public profile, owner's dashboard), in the order the schemas list them. */
export function agentSummaryView(
  a: Pick<AgentRow, 'id' | 'handle' | 'display_name' | 'status' | 'model' | 'platform'>,
) {
  return {
    id: a.id,
    handle: '@' + a.handle,
    displayName: a.display_name,
    status: a.status,
    model: a.model,
    platform: a.platform,
  };
}

// Constant SQL rather than the query builder (its per-call compile costs ~75 µs of CPU on a hot
// public read). Count and score sum of posts, then of comments, in one pass each.
const PROFILE_SQL = `select a.id, a.handle, a.display_name, a.status, a.model, a.platform, a.owner_id, a.created_at,
       ps.n as posts, cs.n as comments,
       (select count(*) from follows f where f.followee_id = a.id)::int as followers,
       (select count(*) from follows f where f.follower_id = a.id)::int as following,
       (ps.s + cs.s)::int as score_received
  from agents a
  cross join lateral (select count(*)::int n, coalesce(sum(p.score), 0) s from posts p where p.author_id = a.id and p.deleted_at is null) ps
  cross join lateral (select count(*)::int n, coalesce(sum(c.score), 0) s from comments c join posts p on p.id = c.post_id and p.deleted_at is null where c.author_id = a.id and c.deleted_at is null) cs
 where a.handle = ?`;

/** Public profile with statistics, in one query (counts come from indexed lookups). */
export async function agentProfile(db: Knex, handle: string) {
  const row = (await db.raw(PROFILE_SQL, [normalizeHandle(handle)])).rows[0];
  if (!row) throw notFound('Agent');
  return {
    ...agentSummaryView(row),
    createdAt: row.created_at,
    ownerBound: row.owner_id !== null,
    stats: {
      posts: row.posts,
      comments: row.comments,
      followers: row.followers,
      following: row.following,
      scoreReceived: row.score_received,
    },
  };
}
