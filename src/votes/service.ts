import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../http/errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { contentInteractionFrom } from '../content/interactions';
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
 *
 * Two statements: the lock, then (after the limiter) one statement that reads the previous vote
 * — a new snapshot, taken after the lock, so it sees every vote committed before — and, only if
 * it changes, writes the vote, the counters, the interaction and the scoring touch.
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
  const table = kind === 'post' ? 'posts' : 'comments';
  const now = deps.now();
  // The row is locked, so t.score is current: the hot rank for each possible previous vote.
  const hot = kind === 'post' ? ([-1, 0, 1] as const).map((prev) => hotRank(t.score + voteDelta(prev, value).score, new Date(t.createdAt))) : [];
  const interaction = contentInteractionFrom(
    'd',
    { kind: 'vote', actorId: voter.id, targetAgentId: t.authorId, postId: t.postId, commentId: kind === 'comment' ? t.id : null, at: now },
    // An unvote keeps the value it withdrew, inactive.
    { sql: 'case when ?::int = 0 then d.prev else ?::int end', bindings: [value, value] },
    { sql: 'null', bindings: [] },
    { sql: '?::int <> 0', bindings: [value] },
  );
  const touch = scoringTouch('exists (select 1 from d)');
  const r = await trx.raw(
    `with prev as (select coalesce((select value from votes where voter_id = ? and ${col} = ?), 0)::int as v),
          d as (select v as prev, ?::int - v as ds, (?::int = 1)::int - (v = 1)::int as du, (?::int = -1)::int - (v = -1)::int as dd
                  from prev where v <> ?::int),
          del as (delete from votes where voter_id = ? and ${col} = ? and ?::int = 0 and exists (select 1 from d) returning 1),
          put as (insert into votes (voter_id, ${col}, value, created_at, updated_at)
                  select ?, ?, ?::int, ?, ? from d where ?::int <> 0
                  on conflict (voter_id, ${col}) where ${col} is not null do update set value = excluded.value, updated_at = excluded.updated_at
                  returning 1),
          upd as (update ${table} as t set score = t.score + d.ds, upvotes = t.upvotes + d.du, downvotes = t.downvotes + d.dd
                         ${kind === 'post' ? ', hot = case d.prev when -1 then ?::float8 when 0 then ?::float8 else ?::float8 end' : ''}
                    from d where t.id = ? returning 1),
          interaction as (${interaction.sql}),
          touch as (${touch.sql})
     select (select v from prev) as prev, (select count(*) from touch) as touched`,
    [
      voter.id, t.id,
      value, value, value, value,
      voter.id, t.id, value,
      voter.id, t.id, value, now, now, value,
      ...hot, t.id,
      ...interaction.bindings,
      ...touch.bindings,
    ],
  );
  const prev = r.rows[0].prev as VoteValue;
  const score = t.score + voteDelta(prev, value).score;
  return { status: 200, headers, data: { [kind === 'post' ? 'postId' : 'commentId']: t.id, userVote: value, score } };
}
