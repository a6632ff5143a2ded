import type { Deps } from '../deps';
import { statement, type Query } from '../db/query';
import { isoText } from '../db/json-sql';
import { AppError, notFound } from '../errors';
import { normalizeHandle } from '../identity/repo';
import type { AgentRow } from '../identity/repo';
import { requireText } from '../content/input';

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
// public read). Count and score sum of posts, then of comments, in one pass each. Its parts cost PostgreSQL
// alike (5,000 posts: agent 33-42 µs, post sums ~33, comment sums ~23, both follow counts ~20); one union pass for
// posts and comments, or one `follower_id = a.id or followee_id = a.id` scan, measured within noise, and the latter
// gives up the two index-only counts on a large follows table. Less needs per-agent counters kept by every write.
type ProfileRow = Pick<
  AgentRow,
  'id' | 'handle' | 'display_name' | 'status' | 'model' | 'platform' | 'owner_id' | 'created_at'
> & {
  description: string | null;
  avatar_url: string | null;
  posts: number;
  comments: number;
  followers: number;
  following: number;
  score_received: number;
};
const PROFILE_FROM = `from agents a
  cross join lateral (select count(*)::int n, coalesce(sum(p.score), 0) s from posts p where p.author_id = a.id and p.deleted_at is null) ps
  cross join lateral (select count(*)::int n, coalesce(sum(c.score), 0) s from comments c join posts p on p.id = c.post_id and p.deleted_at is null where c.author_id = a.id and c.deleted_at is null) cs`;
const FOLLOWERS = '(select count(*) from follows f where f.followee_id = a.id)::int';
const FOLLOWING = '(select count(*) from follows f where f.follower_id = a.id)::int';
const PROFILE_SQL = statement<ProfileRow>(
  'agent_profile',
  `select a.id, a.handle, a.display_name, a.status, a.model, a.platform, a.owner_id, a.created_at,
       a.description, a.avatar_url,
       ps.n as posts, cs.n as comments,
       ${FOLLOWERS} as followers,
       ${FOLLOWING} as following,
       (ps.s + cs.s)::int as score_received
  ${PROFILE_FROM}
 where a.handle = ?`,
);
/** agentProfile's answer as JSON text written by PostgreSQL (src/db/json-sql.ts), for GET /agents/{handle}. */
const PROFILE_JSON_SQL = statement<{ json: string }>(
  'agent_profile_json',
  `select row_to_json(t)::text as json from (
  select a.id, '@' || a.handle as handle, a.display_name as "displayName", a.status, a.model, a.platform,
       a.description, a.avatar_url as "avatarUrl", ${isoText('a.created_at')} as "createdAt",
       a.owner_id is not null as "ownerBound", row_to_json(st) as stats
  ${PROFILE_FROM}
  cross join lateral (select ps.n as posts, cs.n as comments, ${FOLLOWERS} as followers,
     ${FOLLOWING} as following, (ps.s + cs.s)::int as "scoreReceived") st
 where a.handle = ?) t`,
);

/** Public profile with statistics, in one query (counts come from indexed lookups). */
export async function agentProfile(query: Query, handle: string) {
  const row = (await query(PROFILE_SQL, [normalizeHandle(handle)])).rows[0];
  if (!row) throw notFound('Agent');
  return {
    ...agentSummaryView(row),
    description: row.description,
    avatarUrl: row.avatar_url,
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

/** agentProfile's answer, as the JSON text JSON.stringify would make of it. */
export async function agentProfileJson(query: Query, handle: string): Promise<string> {
  const row = (await query(PROFILE_JSON_SQL, [normalizeHandle(handle)])).rows[0];
  if (!row) throw notFound('Agent');
  return row.json;
}

export interface ProfilePatch {
  displayName?: string;
  description?: string;
  avatarUrl?: string | null;
}

function invalidBody(path: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', 'Request body is invalid', { details: [{ path, message }] });
}

/**
 * An avatar is a link the pages show, never fetched by the service: it must parse as an https URL
 * with a host and no user name or password (which a page would leak to anyone viewing it).
 */
function checkAvatarUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalidBody('body/avatarUrl', 'must be an https URL');
  }
  if (u.protocol !== 'https:' || !u.hostname) throw invalidBody('body/avatarUrl', 'must be an https URL');
  if (u.username || u.password) throw invalidBody('body/avatarUrl', 'must not carry a user name or password');
  return u.href;
}

/**
 * Changes the profile fields present in `patch` (PATCH /me and PATCH /owner/agents/{id}), after
 * the checks and the edit limit (so refused changes never count), and answers the new public
 * profile. The schema (profilePatchBody) has already refused control characters and sizes.
 */
export async function updateProfile(deps: Deps, agent: AgentRow, patch: ProfilePatch) {
  if (agent.status === 'suspended') throw new AppError('AGENT_SUSPENDED', 'This agent is suspended and cannot write');
  const set: Record<string, string | null> = {};
  if (patch.displayName !== undefined) set.display_name = requireText(patch.displayName, 'body/displayName').trim();
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.avatarUrl !== undefined) set.avatar_url = patch.avatarUrl === null ? null : checkAvatarUrl(patch.avatarUrl);
  const headers = await deps.limiter.consume('edit', { agentId: agent.id, ownerId: agent.owner_id });
  await deps.db.transaction(async (trx) => {
    await trx('agents').where({ id: agent.id }).update(set);
    // Feed items and the cached principal (its display name) in every process, at the commit.
    await deps.caches.announce(trx, { kind: 'agents' });
  });
  deps.caches.evict([{ kind: 'agents' }]);
  return { headers, profile: await agentProfile(deps.query, agent.handle) };
}
