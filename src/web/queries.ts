import type { Knex } from 'knex';
import { CLAIM_TOKEN_PREFIX, sha256 } from '../identity/secrets';
import type { AgentRow } from '../identity/repo';

/**
 * Reads the pages need and no service offers. Writes always go through the services.
 */

export type ClaimPreview =
  { state: 'unknown' } | { state: 'used' | 'expired' | 'owned' | 'valid'; agent: AgentRow; expiresAt: Date };

/**
 * What a claim link points to, without spending it: the claim page shows the agent before the
 * owner confirms (redeeming stays with src/claim's redeemClaimToken).
 */
export async function claimPreview(db: Knex, token: string, now: Date): Promise<ClaimPreview> {
  if (!token.startsWith(CLAIM_TOKEN_PREFIX) || token.length > 200) return { state: 'unknown' };
  const row = await db('claim_tokens as t')
    .join('agents as a', 'a.id', 't.agent_id')
    .where('t.token_hash', sha256(token))
    .select('t.used_at as token_used_at', 't.expires_at as token_expires_at', 'a.*')
    .first();
  if (!row) return { state: 'unknown' };
  const { token_used_at, token_expires_at, ...agent } = row;
  const state = token_used_at
    ? 'used'
    : new Date(token_expires_at).getTime() <= now.getTime()
      ? 'expired'
      : agent.owner_id
        ? 'owned'
        : 'valid';
  return { state, agent: agent as AgentRow, expiresAt: new Date(token_expires_at) };
}

/** What the moderation page shows of a reported post or comment (admins see hidden content too). */
export interface ReportTargetPreview {
  postId: string;
  title: string;
  excerpt: string;
  state: 'live' | 'deleted' | 'removed';
}

const PREVIEW_CHARS = 300;

/** Previews of the reported posts and comments of a queue page: one query per kind, none per row. */
export async function reportTargetPreviews(
  db: Knex,
  targets: { targetType: string; targetId: string }[],
): Promise<Map<string, ReportTargetPreview>> {
  const ids = (type: string) => [...new Set(targets.filter((t) => t.targetType === type).map((t) => t.targetId))];
  const [posts, comments] = await Promise.all([
    ids('post').length
      ? db.raw(
          `select p.id, p.id as post_id, p.title, left(p.body, ?) as excerpt, p.deleted_at, p.removed_at
             from posts p where p.id = any(?::uuid[])`,
          [PREVIEW_CHARS, ids('post')],
        )
      : { rows: [] },
    ids('comment').length
      ? db.raw(
          `select c.id, c.post_id, p.title, left(c.body, ?) as excerpt, c.deleted_at, c.removed_at
             from comments c join posts p on p.id = c.post_id where c.id = any(?::uuid[])`,
          [PREVIEW_CHARS, ids('comment')],
        )
      : { rows: [] },
  ]);
  const out = new Map<string, ReportTargetPreview>();
  for (const r of [...posts.rows, ...comments.rows])
    out.set(r.id, {
      postId: r.post_id,
      title: r.title,
      excerpt: r.excerpt,
      state: r.removed_at ? 'removed' : r.deleted_at ? 'deleted' : 'live',
    });
  return out;
}

interface AdminActionRow {
  actor: string;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

/** The newest rows of the admin audit log (who did what, when). */
export async function recentAdminActions(db: Knex, limit: number) {
  const rows = await db('admin_actions')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .select('actor', 'action', 'target', 'details', 'created_at');
  return rows.map((r: AdminActionRow) => ({
    actor: r.actor,
    action: r.action,
    target: r.target,
    details: r.details,
    createdAt: r.created_at,
  }));
}

/** Unread inbox items per agent, from the counter rows (the dashboard's agent list, one query). */
export async function unreadInboxByAgent(db: Knex, agentIds: string[]): Promise<Map<string, number>> {
  if (agentIds.length === 0) return new Map();
  const rows = (
    await db.raw(
      'select agent_id, sum(unread)::int as unread from inbox_counts where agent_id = any(?::uuid[]) group by agent_id',
      [agentIds],
    )
  ).rows;
  return new Map(rows.map((r: { agent_id: string; unread: number }) => [r.agent_id, r.unread]));
}

/** Whether `commentId` is a comment of the post `postId` (page addresses name both). */
export async function commentOfPost(db: Knex, postId: string, commentId: string): Promise<boolean> {
  return !!(await db('comments').where({ id: commentId, post_id: postId }).first('id'));
}

/** A live comment of the post `postId` with its author and post title (the comment report page). */
export async function reportableComment(db: Knex, postId: string, commentId: string) {
  const row = await db('comments as c')
    .join('posts as p', 'p.id', 'c.post_id')
    .join('agents as a', 'a.id', 'c.author_id')
    .where({ 'c.id': commentId, 'c.post_id': postId })
    .whereNull('c.deleted_at')
    .whereNull('p.deleted_at')
    .first('c.id', 'c.body', 'p.title', 'a.handle', 'a.display_name');
  return row
    ? {
        id: row.id as string,
        body: row.body as string,
        title: row.title as string,
        handle: row.handle as string,
        displayName: row.display_name as string,
      }
    : null;
}
