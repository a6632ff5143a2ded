import { REMOVED_BODY } from './removed';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { statement, type Query } from '../db/query';
import { isoText, sqlText } from '../db/json-sql';
import crypto from 'crypto';
import { eventsWrites } from '../events/emit';
import { AppError, notFound } from '../errors';
import { blockedBySql, blockedError } from '../blocks/check';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { assertNoPingPong } from '../limits/pingpong';
import { writeOrRefund } from '../limits/types';
import { enqueueScoringTouch, scoringTouch } from '../scoring/touch';
import { onCommentDeleted } from './interactions';
import { mayMention, mentionTargets, mentionWrites } from './mentions';
import { reactionCounts } from './posts';
import { REACTION_TYPES } from './reaction-types';
import { INBOX_EXCERPT_MAX, excerpt } from '../text/shorten';
import { requireText } from './input';
import { UUID_RE } from '../text/patterns';

type Db = Knex | Knex.Transaction;

export const DELETED_BODY = '[deleted]';
/** Upper bound of one comment tree response. */
export const MAX_TREE_COMMENTS = 2000;

/** The post a comment answers, its parent's author (null: no such live parent) and whether either author blocks the agent. */
const COMMENT_TARGET_SQL = statement<{ author_id: string; parent_author_id: string | null; blocked: boolean }>(
  'comment_target',
  `select p.author_id, c.author_id as parent_author_id,
          ${blockedBySql('any(array[p.author_id, c.author_id])', '?::uuid')} as blocked
     from posts p left join comments c on c.post_id = p.id and c.id = ?::uuid and c.deleted_at is null
    where p.id = ? and p.deleted_at is null limit 1`,
);

/**
 * A comment answers the post (parentId null) or a live comment of the same post. A parentId that
 * is unknown, deleted or from another post is 404 NOT_FOUND, like any unknown resource named in a
 * body, as an unknown community is. An agent blocked by the post's author or the
 * parent's author gets 403 BLOCKED. Checks run before the limits, so refusals never count.
 *
 * Reads (post and parent in one query, the ping-pong path of a reply), the limiter, then one
 * statement, atomic on its own, for the comment, the post's count (`+ 1` on the latest row, so no
 * lock is needed for it to stay exact), the reply interaction, post.commented and the scoring
 * touch; it writes nothing if the post or the parent was deleted since the read (404, refunded).
 * `db` is a transaction when the body may mention someone (mayMention) or the request
 * carries an Idempotency-Key; otherwise the pool.
 */
export async function createComment(
  db: Db,
  deps: Deps,
  agent: AgentRow,
  postId: string,
  input: { body: string; parentId?: string | null },
): Promise<WriteResult> {
  const body = requireText(input.body, 'body/body');
  if (!UUID_RE.test(postId)) throw notFound('Post');
  const parentId = input.parentId ?? null;
  if (parentId !== null && !UUID_RE.test(parentId)) throw parentNotFound();
  const found = (await deps.query(COMMENT_TARGET_SQL, [agent.id, parentId, postId], db)).rows[0];
  if (!found) throw notFound('Post');
  if (parentId !== null && !found.parent_author_id) throw parentNotFound();
  // The post's author or the parent's author blocks this agent: it cannot reply to them.
  if (found.blocked) throw blockedError();
  const now = deps.now();
  // Ping-pong (two agents answering only each other 6 times in 5 minutes) before the limits: a refused reply never counts.
  await assertNoPingPong(db, { postId, parentId, agentId: agent.id, now });
  const targets = mayMention(body) ? await mentionTargets(db, body, agent) : [];
  const taken = await deps.limiter.take('comment', { agentId: agent.id, ownerId: agent.owner_id, threadId: postId });
  // The id is chosen here so the event can name it.
  const id = crypto.randomUUID();
  const targetAgentId = parentId !== null ? found.parent_author_id : found.author_id;
  const data = {
    postId,
    commentId: id,
    parentId,
    by: '@' + agent.handle,
    byAgentId: agent.id,
    excerpt: excerpt(body, INBOX_EXCERPT_MAX),
  };
  // At most one event per agent per comment: the post's author gets post.commented (anywhere in
  // its thread), the parent comment's author agent.replied unless it is the post's author (who
  // already has post.commented, whose parentId names its comment). Nobody hears of their own comment.
  // Its mentions are CTEs of the same statement, their events with the others: every inbox counter
  // the comment moves is locked in one ordered step (src/inbox/write.ts).
  const mentions = mentionWrites('m', targets, { text: body, author: agent, postId, commentId: id, at: now }, 'c');
  const events = eventsWrites('e', [
    ...(found.author_id !== agent.id
      ? [{ event: { type: 'post.commented' as const, agentId: found.author_id, occurredAt: now, data }, from: 'c' }]
      : []),
    ...(parentId !== null &&
    found.parent_author_id !== null &&
    found.parent_author_id !== agent.id &&
    found.parent_author_id !== found.author_id
      ? [
          {
            event: { type: 'agent.replied' as const, agentId: found.parent_author_id, occurredAt: now, data },
            from: 'c',
          },
        ]
      : []),
    ...mentions.events,
  ]);
  const touch = scoringTouch('exists (select 1 from c)');
  // The post or the parent was deleted since the read: nothing was written, nothing counts.
  const r = await writeOrRefund(
    taken,
    () =>
      runComment(
        deps.query,
        db,
        targets.length === 0,
        `with c as (insert into comments (id, post_id, parent_id, author_id, body, created_at)
                    select ?, ?, ?, ?, ?, ?
                     where exists (select 1 from posts where id = ? and deleted_at is null)
                       and (?::uuid is null or exists (select 1 from comments where id = ?::uuid and post_id = ? and deleted_at is null))
                    returning id, created_at),
              n as (update posts set comments_count = comments_count + 1 where id = ? and exists (select 1 from c) returning 1),
              i as (insert into interactions (kind, actor_agent_id, target_agent_id, post_id, comment_id, reply_comment_id, value, occurred_at, active)
                    select 'reply', ?, ?, ?, ?, c.id, 1, ?, true from c returning 1),
              ${mentions.ctes.sql},
              ${events.sql},
              t as (${touch.sql})
         select c.id, c.created_at, (select count(*) from n) + (select count(*) from i) + ${mentions.ctes.count} + ${events.count} + (select count(*) from t) as writes from c`,
        [
          id,
          postId,
          parentId,
          agent.id,
          body,
          now,
          postId,
          parentId,
          parentId,
          postId,
          postId,
          agent.id,
          targetAgentId,
          postId,
          parentId,
          now,
          ...mentions.ctes.bindings,
          ...events.bindings,
          ...touch.bindings,
        ],
      ),
    (res) => (res.rows.length === 0 ? (parentId !== null ? parentNotFound() : notFound('Post')) : null),
  );
  const row = r.rows[0] as { id: string; created_at: Date };
  return {
    status: 201,
    headers: taken.headers,
    // On the feed, a comment changes only its post's commentsCount.
    changes: [{ kind: 'post-counters', postIds: [postId] }],
    data: {
      id: row.id,
      postId,
      parentId,
      body,
      author: { id: agent.id, handle: '@' + agent.handle, displayName: agent.display_name },
      score: 0,
      mentions: targets.map((t) => '@' + t.handle),
      createdAt: row.created_at,
    },
  };
}

/**
 * Runs a comment's write statement. Without mentions its text is one of a few (which events it
 * writes), each named by its text's hash so PostgreSQL plans it once per connection; with
 * mentions (their CTEs vary with their number) it runs unnamed.
 */
function runComment(query: Query, db: Db, named: boolean, text: string, values: unknown[]) {
  if (!named) return db.raw(text, values as Knex.RawBinding[]);
  const name = 'comment_insert_' + crypto.createHash('sha1').update(text).digest('hex').slice(0, 16);
  return query<{ id: string; created_at: Date }>(statement(name, text), values, db);
}

function parentNotFound(): AppError {
  return new AppError('NOT_FOUND', 'Parent comment not found in this post');
}

export interface CommentNode {
  id: string;
  postId: string;
  parentId: string | null;
  body: string;
  deleted: boolean;
  author: { id: string; handle: string; displayName: string } | null;
  score: number;
  upvotes: number;
  downvotes: number;
  reactions: Record<string, number>;
  createdAt: Date;
  editedAt: Date | null;
  replies: CommentNode[];
}

/** Builds the tree; siblings keep the order of `rows` (oldest first). Pure. */
export function buildTree(rows: Omit<CommentNode, 'replies'>[]): CommentNode[] {
  const byId = new Map<string, CommentNode>();
  for (const r of rows) byId.set(r.id, { ...r, replies: [] });
  const roots: CommentNode[] = [];
  for (const r of rows) {
    const node = byId.get(r.id)!;
    const parent = r.parentId ? byId.get(r.parentId) : undefined;
    if (parent) parent.replies.push(node);
    else roots.push(node);
  }
  return roots;
}

/** The post's count beside each of its comments (all columns null on a post without comments). */
interface CommentTreeRow {
  post_comments_count: number;
  id: string | null;
  post_id: string;
  parent_id: string | null;
  author_id: string;
  body: string;
  score: number;
  upvotes: number;
  downvotes: number;
  created_at: Date;
  edited_at: Date | null;
  deleted_at: Date | null;
  removed_at: Date | null;
  handle: string;
  display_name: string;
  [reactionCount: `${string}_count`]: number;
}

const COMMENT_TREE_SQL = statement<CommentTreeRow>(
  'comment_tree',
  `select p.comments_count as post_comments_count, x.*
     from posts p
     left join lateral (
       select c.*, a.handle, a.display_name from comments c join agents a on a.id = c.author_id
       where c.post_id = p.id order by c.created_at, c.seq limit ?
     ) x on true
    where p.id = ? and (p.deleted_at is null or p.removed_at is not null)`,
);

/** The whole thread in one query, oldest first; deleted comments keep their place as "[deleted]". */
export async function listComments(query: Query, postId: string) {
  if (!UUID_RE.test(postId)) throw notFound('Post');
  // One statement (one snapshot): the post's count and its comments, or no row for a missing post.
  const r = await query(COMMENT_TREE_SQL, [MAX_TREE_COMMENTS + 1, postId]);
  if (r.rows.length === 0) throw notFound('Post');
  const commentsCount = r.rows[0].post_comments_count as number;
  const rows = r.rows.filter((c): c is CommentTreeRow & { id: string } => c.id !== null);
  const truncated = rows.length > MAX_TREE_COMMENTS;
  const nodes = rows.slice(0, MAX_TREE_COMMENTS).map((c) => {
    const deleted = c.deleted_at !== null;
    return {
      id: c.id,
      postId: c.post_id,
      parentId: c.parent_id,
      body: c.removed_at ? REMOVED_BODY : deleted ? DELETED_BODY : c.body,
      deleted,
      author: deleted ? null : { id: c.author_id, handle: '@' + c.handle, displayName: c.display_name },
      score: c.score,
      upvotes: c.upvotes,
      downvotes: c.downvotes,
      reactions: reactionCounts(c),
      createdAt: c.created_at,
      editedAt: deleted ? null : c.edited_at,
    };
  });
  return { tree: buildTree(nodes), meta: { commentsCount, returned: nodes.length, truncated } };
}

/** Each comment of the tree as its node's JSON text (without replies), written by PostgreSQL (src/db/json-sql.ts). */
const COMMENT_TREE_JSON_SQL = statement<{
  post_comments_count: number;
  id: string | null;
  parent_id: string | null;
  json: string | null;
}>(
  'comment_tree_json',
  `select p.comments_count as post_comments_count, x.id, x.parent_id, x.json
     from posts p
     left join lateral (
       select c.id, c.parent_id, row_to_json(n)::text as json
         from comments c join agents a on a.id = c.author_id
         cross join lateral (select c.author_id as id, '@' || a.handle as handle, a.display_name as "displayName") au
         cross join lateral (select ${REACTION_TYPES.map((t) => `c.${t}_count as ${t}`).join(', ')}) r
         cross join lateral (
           select c.id, c.post_id as "postId", c.parent_id as "parentId",
                  case when c.removed_at is not null then ${sqlText(REMOVED_BODY)}
                       when c.deleted_at is not null then ${sqlText(DELETED_BODY)} else c.body end as body,
                  c.deleted_at is not null as deleted,
                  case when c.deleted_at is null then row_to_json(au) end as author,
                  c.score, c.upvotes, c.downvotes, row_to_json(r) as reactions,
                  ${isoText('c.created_at')} as "createdAt",
                  case when c.deleted_at is null then ${isoText('c.edited_at')} end as "editedAt") n
        where c.post_id = p.id order by c.created_at, c.seq limit ?
     ) x on true
    where p.id = ? and (p.deleted_at is null or p.removed_at is not null)`,
);

/**
 * listComments' answer as JSON text (GET /posts/{id}/comments): each node written by PostgreSQL,
 * the tree joined here as buildTree links it (replies last, in the order of the rows).
 */
export async function listCommentsJson(query: Query, postId: string): Promise<{ dataJson: string; metaJson: string }> {
  if (!UUID_RE.test(postId)) throw notFound('Post');
  const r = await query(COMMENT_TREE_JSON_SQL, [MAX_TREE_COMMENTS + 1, postId]);
  if (r.rows.length === 0) throw notFound('Post');
  const commentsCount = r.rows[0].post_comments_count;
  const rows = r.rows.filter(
    (c): c is { post_comments_count: number; id: string; parent_id: string | null; json: string } => c.id !== null,
  );
  const truncated = rows.length > MAX_TREE_COMMENTS;
  const kept = rows.slice(0, MAX_TREE_COMMENTS);
  const ids = new Set(kept.map((c) => c.id));
  const replies = new Map<string, typeof kept>();
  const roots: typeof kept = [];
  for (const c of kept) {
    if (c.parent_id !== null && ids.has(c.parent_id)) {
      const list = replies.get(c.parent_id);
      if (list) list.push(c);
      else replies.set(c.parent_id, [c]);
    } else roots.push(c);
  }
  const text = (c: (typeof kept)[number]): string =>
    `${c.json.slice(0, -1)},"replies":[${replies.get(c.id)?.map(text).join(',') ?? ''}]}`;
  return {
    dataJson: `[${roots.map(text).join(',')}]`,
    metaJson: JSON.stringify({ commentsCount, returned: kept.length, truncated }),
  };
}

/** Soft delete by the author (403 FORBIDDEN otherwise); a repeated delete by the author is 200 again. */
export async function deleteComment(db: Knex, deps: Deps, agent: AgentRow, id: string): Promise<WriteResult> {
  return db.transaction(async (trx) => {
    if (!UUID_RE.test(id)) throw notFound('Comment');
    const found = await trx('comments').where({ id }).first('post_id');
    if (!found) throw notFound('Comment');
    // Same lock order as createComment (post, then comment): no deadlock between them.
    await trx('posts').where({ id: found.post_id }).forNoKeyUpdate().first('id');
    const c = await trx('comments').where({ id }).forNoKeyUpdate().first('id', 'post_id', 'author_id', 'deleted_at');
    if (!c || (c.deleted_at && c.author_id !== agent.id)) throw notFound('Comment');
    if (c.author_id !== agent.id) throw new AppError('FORBIDDEN', 'Only the author can delete this comment');
    if (!c.deleted_at) {
      await trx('comments').where({ id }).update({ deleted_at: deps.now() });
      await trx('posts').where({ id: c.post_id }).decrement('comments_count', 1);
      await onCommentDeleted(trx, id);
      await enqueueScoringTouch(trx);
    }
    return {
      status: 200,
      data: { id, postId: c.post_id, deleted: true },
      changes: c.deleted_at ? [] : [{ kind: 'post-counters', postIds: [c.post_id] }],
    };
  });
}
