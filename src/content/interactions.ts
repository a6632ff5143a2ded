import type { Knex } from 'knex';
import type { SqlPart } from '../db/jobs';

/**
 * Writers of `interactions`, the raw input of scoring (ARCHITECTURE.md). Called inside the
 * transaction (votes, reactions, follows and blocks: the very statement) of the write that they describe,
 * with the scoring touch (src/scoring/touch.ts). `updated_at` is the database clock (scoring's watermark);
 * `occurred_at` is the service clock (deps.now()), so tests can place activity in a week.
 */
type Db = Knex | Knex.Transaction;

/**
 * The write of a vote's or reaction's interaction row as a CTE body of the write's own statement:
 * one row per row of `source` (the CTE holding the change, empty when nothing changed). A SELECT
 * CTE runs only when referenced: the write's main SELECT must count its rows. `value` and
 * `reactionType` are SQL expressions over `source` or `?` bind parameters taken in order after the
 * leading ones; `targetAgentId` and `postId` are values, or SQL expressions over `source` when the
 * statement itself found the target.
 *
 * interaction_put (sql/109_interaction_partitions.ts) keeps one row per (kind, actor, target
 * content) in the month-partitioned table: it locks the identity's key, then updates its row,
 * moving it to the partition of the new occurred_at, or inserts the first one.
 */
export function contentInteractionFrom(
  source: string,
  row: {
    kind: 'vote' | 'reaction';
    actorId: string;
    targetAgentId: string | SqlPart;
    postId: string | SqlPart;
    commentId: string | null;
    at: Date;
  },
  value: SqlPart,
  reactionType: SqlPart,
  active: SqlPart,
): SqlPart {
  const target = uuidPart(row.targetAgentId);
  const post = uuidPart(row.postId);
  return {
    sql: `select interaction_put(?, ?::uuid, ${target.sql}, ${post.sql}, ?::uuid, ${value.sql}, ${reactionType.sql}, ?::timestamptz, ${active.sql})
          from ${source}`,
    bindings: [
      row.kind,
      row.actorId,
      ...target.bindings,
      ...post.bindings,
      row.commentId,
      ...value.bindings,
      ...reactionType.bindings,
      row.at,
      ...active.bindings,
    ],
  };
}

function uuidPart(v: string | SqlPart): SqlPart {
  return typeof v === 'string' ? { sql: '?::uuid', bindings: [v] } : v;
}

/**
 * The live target of a vote or reaction as a CTE body (id, post_id, author_id): a post, or a
 * comment whose post is live too; `x` is the target row. `authorColumns`, SQL over `x` and its
 * author `a` (joined only then), are appended. Bindings: those of `authorColumns`, then the target id.
 */
export function liveTargetSql(kind: 'post' | 'comment', authorColumns?: string): string {
  const cols = `x.id, ${kind === 'post' ? 'x.id' : 'x.post_id'} as post_id, x.author_id${authorColumns ? `, ${authorColumns}` : ''}`;
  const author = authorColumns ? ' join agents a on a.id = x.author_id' : '';
  return kind === 'post'
    ? `select ${cols} from posts x${author} where x.id = ? and x.deleted_at is null`
    : `select ${cols} from comments x${author} join posts p on p.id = x.post_id where x.id = ? and x.deleted_at is null and p.deleted_at is null`;
}

/**
 * The write of a follow's interaction row (`active`: following), as a SELECT CTE body counted by
 * the main SELECT: one row per row of `source`. `actorId` and `targetId` are values, or SQL
 * expressions over `source` (a statement that changed several follows).
 */
export function followInteractionFrom(
  source: string,
  actorId: string | SqlPart,
  targetId: string | SqlPart,
  active: boolean,
  at: Date,
): SqlPart {
  const actor = uuidPart(actorId);
  const target = uuidPart(targetId);
  return {
    sql: `select interaction_put('follow', ${actor.sql}, ${target.sql}, null, null, 1, null, ?::timestamptz, ?::boolean) from ${source}`,
    bindings: [...actor.bindings, ...target.bindings, at, active],
  };
}

/**
 * A deleted reply stops counting as one; votes, reactions and replies on it are re-weighed
 * (DELETED_TARGET): touched, as scoring reweighs only the rows that changed and what they reach.
 */
export async function onCommentDeleted(trx: Db, commentId: string): Promise<void> {
  await trx.raw(
    `update interactions set active = false, updated_at = clock_timestamp() where kind = 'reply' and reply_comment_id = ?`,
    [commentId],
  );
  await trx.raw(
    `update interactions set updated_at = clock_timestamp() where comment_id = ? and kind in ('vote', 'reaction', 'reply')`,
    [commentId],
  );
}

/** Everything that happened on a deleted post is re-weighed by scoring (DELETED_TARGET). */
export async function onPostDeleted(trx: Db, postId: string): Promise<void> {
  await trx.raw(`update interactions set updated_at = clock_timestamp() where post_id = ?`, [postId]);
}
