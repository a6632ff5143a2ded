import type { Knex } from 'knex';
import { FEED_TAGGED_SQL } from '../content/feed-cache';
import type { Deps } from '../deps';
import { AppError, notFound } from '../http/errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { writeOrRefund } from '../limits/types';
import { contentInteractionFrom } from '../content/interactions';
import { hotRankSql, UUID_RE } from '../content/text';

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
}

/** The live target and its author's owner (a plain read: the write statement is atomic on its own). */
async function findTarget(db: Knex | Knex.Transaction, kind: 'post' | 'comment', id: string): Promise<Target> {
  if (!UUID_RE.test(id)) throw notFound(kind === 'post' ? 'Post' : 'Comment');
  if (kind === 'post') {
    const p = await db('posts as p')
      .join('agents as a', 'a.id', 'p.author_id')
      .where('p.id', id)
      .whereNull('p.deleted_at')
      .first('p.author_id', 'a.owner_id');
    if (!p) throw notFound('Post');
    return { kind, id, postId: id, authorId: p.author_id, authorOwnerId: p.owner_id };
  }
  const c = await db('comments as c')
    .join('agents as a', 'a.id', 'c.author_id')
    .join('posts as p', 'p.id', 'c.post_id')
    .where('c.id', id)
    .whereNull('c.deleted_at')
    .whereNull('p.deleted_at')
    .first('c.post_id', 'c.author_id', 'a.owner_id');
  if (!c) throw notFound('Comment');
  return { kind, id, postId: c.post_id, authorId: c.author_id, authorOwnerId: c.owner_id };
}

/**
 * Sets the voter's vote on a post or comment to `value`: a read of the target (404, refusals),
 * the limiter, then one statement, atomic on its own, that needs no lock held across round trips.
 *
 * The previous vote is not read from a snapshot (a concurrent vote of the same voter could be
 * missing from it) but deduced from what the statement itself did to the (voter, target) row,
 * which PostgreSQL applies on the latest committed version: a delete returns the value it
 * removed; an insert means there was none; the upsert's update runs only when the value
 * changes, and values are only 1 and -1, so the previous one was -value. The counters then move
 * by that delta with `score = score + delta` (re-evaluated on the latest row), and the post's hot
 * rank with its new score. So 50 parallel identical votes move the score by exactly 1.
 */
export async function castVote(
  db: Knex | Knex.Transaction,
  deps: Deps,
  voter: AgentRow,
  kind: 'post' | 'comment',
  targetId: string,
  value: VoteValue,
): Promise<WriteResult> {
  const t = await findTarget(db, kind, targetId);
  const refusal = voteRefusal(voter, { id: t.authorId, owner_id: t.authorOwnerId });
  if (refusal) throw refusal;
  const taken = await deps.limiter.take('vote', { agentId: voter.id, ownerId: voter.owner_id });
  const col = kind === 'post' ? 'post_id' : 'comment_id';
  const table = kind === 'post' ? 'posts' : 'comments';
  const now = deps.now();
  const interaction = contentInteractionFrom(
    'd',
    { kind: 'vote', actorId: voter.id, targetAgentId: t.authorId, postId: t.postId, commentId: kind === 'comment' ? t.id : null, at: now },
    // An unvote keeps the value it withdrew, inactive.
    { sql: 'case when ?::int = 0 then d.prev else ?::int end', bindings: [value, value] },
    { sql: 'null', bindings: [] },
    { sql: '?::int <> 0', bindings: [value] },
  );
  const touch = scoringTouch('exists (select 1 from d)');
  // Deleted between the read and the write: nothing was written, nothing counts.
  const r = await writeOrRefund(
    taken,
    () =>
      db.raw(
        `${FEED_TAGGED_SQL}with t as (select id, score from ${table} where id = ? and deleted_at is null),
              del as (delete from votes where voter_id = ? and ${col} = ? and ?::int = 0 and exists (select 1 from t) returning value::int as prev),
              put as (insert into votes (voter_id, ${col}, value, created_at, updated_at)
                      select ?, t.id, ?::int, ?, ? from t where ?::int <> 0
                      on conflict (voter_id, ${col}) where ${col} is not null
                        do update set value = excluded.value, updated_at = excluded.updated_at where votes.value <> excluded.value
                      returning (case when xmax = 0 then 0 else -value end)::int as prev),
              d as (select prev, ?::int - prev as ds, (?::int = 1)::int - (prev = 1)::int as du, (?::int = -1)::int - (prev = -1)::int as dd
                      from (select prev from del union all select prev from put) c),
              upd as (update ${table} as x set score = x.score + d.ds, upvotes = x.upvotes + d.du, downvotes = x.downvotes + d.dd
                             ${kind === 'post' ? `, hot = ${hotRankSql('x.score + d.ds', 'x.created_at')}` : ''}
                        from d where x.id = ? returning x.score),
              interaction as (${interaction.sql}),
              touch as (${touch.sql})
         select (select count(*) from t)::int as found, (select score from upd) as score, (select count(*) from touch) as touched`,
        [
          t.id,
          voter.id, t.id, value,
          voter.id, value, now, now, value,
          value, value, value,
          t.id,
          ...interaction.bindings,
          ...touch.bindings,
        ],
      ),
    (res) => (res.rows[0].found === 0 ? notFound(kind === 'post' ? 'Post' : 'Comment') : null),
  );
  // Nothing changed (the vote was already so): the score as committed now, which a snapshot
  // taken before a concurrent identical vote committed would not show.
  const score = r.rows[0].score ?? (await db(table).where({ id: t.id }).first('score'))?.score ?? 0;
  // A comment's score is on no feed page; a post's is on the pages that show it.
  return { status: 200, headers: taken.headers, feedPosts: kind === 'post' ? [t.id] : [], data: { [kind === 'post' ? 'postId' : 'commentId']: t.id, userVote: value, score } };
}
