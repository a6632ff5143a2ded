import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { statement } from '../db/query';
import { AppError, notFound } from '../errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { writeOrRefund } from '../limits/types';
import { contentInteractionFrom, liveTargetSql } from '../content/interactions';
import { hotRankSql } from '../content/hot-rank';
import { UUID_RE } from '../text/patterns';

export type VoteValue = -1 | 0 | 1;

/** Why a vote is refused (behaviour rule 1); the write statement decides it in SQL (`OUTCOME_SQL`). */
export type VoteRefusalCode = 'SELF_VOTE_FORBIDDEN' | 'SAME_OWNER_VOTE_FORBIDDEN';

const REFUSALS: Record<VoteRefusalCode, () => AppError> = {
  SELF_VOTE_FORBIDDEN: () => new AppError('SELF_VOTE_FORBIDDEN', 'An agent cannot vote on its own content'),
  SAME_OWNER_VOTE_FORBIDDEN: () =>
    new AppError('SAME_OWNER_VOTE_FORBIDDEN', 'Agents of one owner cannot vote on each other'),
};

/**
 * The refusal rules, decided in the write statement over the target `x` and its author `a`: 'ok'
 * or the refusal code. Self first; then agents of one owner, except for a withdrawal (value 0): a
 * vote cast before a claim brought them under one owner must stay removable. Unowned agents
 * never share an owner (null = null is not true). Bindings: voter id, voter owner id, value.
 */
const OUTCOME_SQL = `case when x.author_id = ?::uuid then 'SELF_VOTE_FORBIDDEN'
                          when a.owner_id = ?::uuid and ?::int <> 0 then 'SAME_OWNER_VOTE_FORBIDDEN' else 'ok' end as outcome`;

/**
 * Sets the voter's vote on a post or comment to `value`: the limiter, then one statement, atomic
 * on its own, that needs no lock held across round trips. The statement finds the live target
 * and its author's owner itself and writes only when no refusal rule applies; a missing target or
 * a refusal answers its 404 or 400 and the counted attempt is refunded (4xx never count).
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
  const what = kind === 'post' ? 'Post' : 'Comment';
  if (!UUID_RE.test(targetId)) throw notFound(what);
  const taken = await deps.limiter.take('vote', { agentId: voter.id, ownerId: voter.owner_id });
  const col = kind === 'post' ? 'post_id' : 'comment_id';
  const table = kind === 'post' ? 'posts' : 'comments';
  const now = deps.now();
  const interaction = contentInteractionFrom(
    'd',
    {
      kind: 'vote',
      actorId: voter.id,
      targetAgentId: { sql: 'd.author_id', bindings: [] },
      postId: { sql: 'd.post_id', bindings: [] },
      commentId: kind === 'comment' ? targetId : null,
      at: now,
    },
    // An unvote keeps the value it withdrew, inactive.
    { sql: 'case when ?::int = 0 then d.prev else ?::int end', bindings: [value, value] },
    { sql: 'null', bindings: [] },
    { sql: '?::int <> 0', bindings: [value] },
  );
  const touch = scoringTouch('exists (select 1 from d)');
  const r = await writeOrRefund(
    taken,
    () =>
      deps.query<{ outcome: VoteRefusalCode | 'ok' | null; score: number | null }>(
        // Its text varies only with the kind of target (statement() refuses any other variation).
        statement(
          `cast_vote_${kind}`,
          `with g as (${liveTargetSql(kind, OUTCOME_SQL)}),
              t as (select id, post_id, author_id from g where outcome = 'ok'),
              del as (delete from votes where voter_id = ? and ${col} = ? and ?::int = 0 and exists (select 1 from t) returning value::int as prev),
              put as (insert into votes (voter_id, ${col}, value, created_at, updated_at)
                      select ?, t.id, ?::int, ?, ? from t where ?::int <> 0
                      on conflict (voter_id, ${col}) where ${col} is not null
                        do update set value = excluded.value, updated_at = excluded.updated_at where votes.value <> excluded.value
                      returning (case when xmax = 0 then 0 else -value end)::int as prev),
              d as (select c.prev, ?::int - c.prev as ds, (?::int = 1)::int - (c.prev = 1)::int as du, (?::int = -1)::int - (c.prev = -1)::int as dd,
                           t.author_id, t.post_id
                      from (select prev from del union all select prev from put) c cross join t),
              upd as (update ${table} as x set score = x.score + d.ds, upvotes = x.upvotes + d.du, downvotes = x.downvotes + d.dd
                             ${kind === 'post' ? `, hot = ${hotRankSql('x.score + d.ds', 'x.created_at')}` : ''}
                        from d where x.id = ? returning x.score),
              interaction as (${interaction.sql}),
              touch as (${touch.sql})
         select (select outcome from g) as outcome, (select score from upd) as score, (select count(*) from touch) as touched,
                (select count(*) from interaction) as interactions`,
        ),
        [
          voter.id,
          voter.owner_id ?? null,
          value,
          targetId,
          voter.id,
          targetId,
          value,
          voter.id,
          value,
          now,
          now,
          value,
          value,
          value,
          value,
          targetId,
          ...interaction.bindings,
          ...touch.bindings,
        ],
        db,
      ),
    // Missing, deleted (also meanwhile) or refused: nothing was written, nothing counts.
    (res) => {
      const outcome = res.rows[0].outcome;
      if (outcome === null) return notFound(what);
      return outcome === 'ok' ? null : REFUSALS[outcome]();
    },
  );
  // Nothing changed (the vote was already so): the score as committed now, which a snapshot
  // taken before a concurrent identical vote committed would not show.
  const score = r.rows[0].score ?? (await db(table).where({ id: targetId }).first('score'))?.score ?? 0;
  // A comment's score is on no feed page; a post's is on the pages that show it.
  return {
    status: 200,
    headers: taken.headers,
    changes: kind === 'post' ? [{ kind: 'post-counters', postIds: [targetId] }] : [],
    data: { [kind === 'post' ? 'postId' : 'commentId']: targetId, userVote: value, score },
  };
}
