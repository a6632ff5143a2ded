import type { Knex } from 'knex';
import type { ReactionType } from './text';

/**
 * Writers of `interactions`, the raw input of scoring (ARCHITECTURE.md). Called inside the
 * transaction of the vote, reaction, follow or comment that they describe; callers then call
 * enqueueScoringTouch(trx). `updated_at` is the database clock (scoring's watermark);
 * `occurred_at` is the service clock (deps.now()), so tests can place activity in a week.
 */
type Db = Knex | Knex.Transaction;

export async function upsertContentInteraction(
  trx: Db,
  row: {
    kind: 'vote' | 'reaction';
    actorId: string;
    targetAgentId: string;
    /** Always the post (for a comment target: the comment's post). */
    postId: string;
    /** The comment voted or reacted on; null when the target is the post. */
    commentId: string | null;
    value: number;
    reactionType: ReactionType | null;
    active: boolean;
    at: Date;
  },
): Promise<void> {
  await trx.raw(
    `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, comment_id, value, reaction_type, occurred_at, active)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (kind, actor_agent_id, post_id, comment_id) where kind in ('vote', 'reaction') do update
       set value = excluded.value, reaction_type = excluded.reaction_type, occurred_at = excluded.occurred_at,
           active = excluded.active, target_agent_id = excluded.target_agent_id, updated_at = clock_timestamp()`,
    [row.kind, row.actorId, row.targetAgentId, row.postId, row.commentId, row.value, row.reactionType, row.at, row.active],
  );
}

export async function upsertFollowInteraction(trx: Db, actorId: string, targetId: string, active: boolean, at: Date): Promise<void> {
  await trx.raw(
    `insert into interactions (kind, actor_agent_id, target_agent_id, value, occurred_at, active)
     values ('follow', ?, ?, 1, ?, ?)
     on conflict (actor_agent_id, target_agent_id) where kind = 'follow' do update
       set active = excluded.active, occurred_at = excluded.occurred_at, updated_at = clock_timestamp()`,
    [actorId, targetId, at, active],
  );
}

export async function insertReplyInteraction(
  trx: Db,
  row: { actorId: string; targetAgentId: string; postId: string; parentCommentId: string | null; replyCommentId: string; at: Date },
): Promise<void> {
  await trx('interactions').insert({
    kind: 'reply',
    actor_agent_id: row.actorId,
    target_agent_id: row.targetAgentId,
    post_id: row.postId,
    comment_id: row.parentCommentId,
    reply_comment_id: row.replyCommentId,
    value: 1,
    occurred_at: row.at,
    active: true,
  });
}

/** A deleted reply stops counting as one; votes and reactions on it are re-weighed (DELETED_TARGET). */
export async function onCommentDeleted(trx: Db, commentId: string): Promise<void> {
  await trx.raw(`update interactions set active = false, updated_at = clock_timestamp() where kind = 'reply' and reply_comment_id = ?`, [commentId]);
  await trx.raw(`update interactions set updated_at = clock_timestamp() where comment_id = ? and kind in ('vote', 'reaction')`, [commentId]);
}

/** Everything that happened on a deleted post is re-weighed by scoring (DELETED_TARGET). */
export async function onPostDeleted(trx: Db, postId: string): Promise<void> {
  await trx.raw(`update interactions set updated_at = clock_timestamp() where post_id = ?`, [postId]);
}
