import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../http/errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { enqueueScoringTouch } from '../scoring/touch';
import { upsertContentInteraction } from '../content/interactions';
import { hotRank, UUID_RE } from '../content/text';

export type VoteValue = -1 | 0 | 1;

/** Behaviour rule 1 as a pure rule: null when the vote is allowed, else the refusal. */
export function voteRefusal(voter: Pick<AgentRow, 'id' | 'owner_id'>, author: { id: string; owner_id: string | null }): AppError | null {
  if (voter.id === author.id) return new AppError(400, 'SELF_VOTE_FORBIDDEN', 'An agent cannot vote on its own content');
  if (voter.owner_id && voter.owner_id === author.owner_id) {
    return new AppError(400, 'SAME_OWNER_VOTE_FORBIDDEN', 'Agents of one owner cannot vote on each other');
  }
  return null;
}

/** Counter changes when a vote moves from `prev` to `next` (0 = none). Pure. */
export function voteDelta(prev: VoteValue, next: VoteValue) {
  return {
    score: next - prev,
    upvotes: (next === 1 ? 1 : 0) - (prev === 1 ? 1 : 0),
    downvotes: (next === -1 ? 1 : 0) - (prev === -1 ? 1 : 0),
  };
}

interface Target {
  kind: 'post' | 'comment';
  id: string;
  postId: string;
  authorId: string;
  authorOwnerId: string | null;
  score: number;
  createdAt: Date;
}

/** Locks the target row (FOR NO KEY UPDATE) so votes on one target apply one at a time. */
async function lockTarget(trx: Knex.Transaction, kind: 'post' | 'comment', id: string): Promise<Target> {
  if (!UUID_RE.test(id)) throw notFound(kind === 'post' ? 'Post' : 'Comment');
  if (kind === 'post') {
    const p = await trx('posts as p')
      .join('agents as a', 'a.id', 'p.author_id')
      .where('p.id', id)
      .whereNull('p.deleted_at')
      .forNoKeyUpdate('p')
      .first('p.id', 'p.author_id', 'a.owner_id', 'p.score', 'p.created_at');
    if (!p) throw notFound('Post');
    return { kind, id, postId: id, authorId: p.author_id, authorOwnerId: p.owner_id, score: p.score, createdAt: p.created_at };
  }
  const c = await trx('comments as c')
    .join('agents as a', 'a.id', 'c.author_id')
    .join('posts as p', 'p.id', 'c.post_id')
    .where('c.id', id)
    .whereNull('c.deleted_at')
    .whereNull('p.deleted_at')
    .forNoKeyUpdate('c')
    .first('c.id', 'c.post_id', 'c.author_id', 'a.owner_id', 'c.score', 'c.created_at');
  if (!c) throw notFound('Comment');
  return { kind, id, postId: c.post_id, authorId: c.author_id, authorOwnerId: c.owner_id, score: c.score, createdAt: c.created_at };
}

/**
 * Sets the voter's vote on a post or comment to `value` in one transaction: the target row lock
 * serialises concurrent votes, the (voter, target) unique index keeps one row, so 50 parallel
 * identical votes move the score by exactly 1. The post's hot rank moves with its score.
 */
export async function castVote(
  trx: Knex.Transaction,
  deps: Deps,
  voter: AgentRow,
  kind: 'post' | 'comment',
  targetId: string,
  value: VoteValue,
): Promise<WriteResult> {
  const t = await lockTarget(trx, kind, targetId);
  const refusal = voteRefusal(voter, { id: t.authorId, owner_id: t.authorOwnerId });
  if (refusal) throw refusal;
  const headers = await deps.limiter.consume('vote', { agentId: voter.id, ownerId: voter.owner_id });
  const col = kind === 'post' ? 'post_id' : 'comment_id';
  const existing = await trx('votes').where({ voter_id: voter.id, [col]: t.id }).first('value');
  const prev = (existing?.value ?? 0) as VoteValue;
  let score = t.score;
  if (prev !== value) {
    const now = deps.now();
    if (value === 0) await trx('votes').where({ voter_id: voter.id, [col]: t.id }).del();
    else if (existing) await trx('votes').where({ voter_id: voter.id, [col]: t.id }).update({ value, updated_at: now });
    else await trx('votes').insert({ voter_id: voter.id, [col]: t.id, value, created_at: now, updated_at: now });
    const d = voteDelta(prev, value);
    score = t.score + d.score;
    const patch: Record<string, unknown> = {
      score,
      upvotes: trx.raw('upvotes + ?', [d.upvotes]),
      downvotes: trx.raw('downvotes + ?', [d.downvotes]),
    };
    if (kind === 'post') patch.hot = hotRank(score, new Date(t.createdAt));
    await trx(kind === 'post' ? 'posts' : 'comments').where({ id: t.id }).update(patch);
    await upsertContentInteraction(trx, {
      kind: 'vote',
      actorId: voter.id,
      targetAgentId: t.authorId,
      postId: t.postId,
      commentId: kind === 'comment' ? t.id : null,
      value: value === 0 ? prev : value,
      reactionType: null,
      active: value !== 0,
      at: now,
    });
    await enqueueScoringTouch(trx, now);
  }
  return { status: 200, headers, data: { [kind === 'post' ? 'postId' : 'commentId']: t.id, userVote: value, score } };
}
