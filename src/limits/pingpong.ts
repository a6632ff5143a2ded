import type { Knex } from 'knex';
import { tooManyRequests } from '../errors';

/** Ping-pong: 6 consecutive mutual replies within 5 minutes. */
export const PING_PONG_REPLIES = 6;
export const PING_PONG_WINDOW_MS = 5 * 60 * 1000;

export interface ChainLink {
  authorId: string;
  createdAt: Date;
}

/**
 * Pure rule. `path` is the new reply's ancestor path, nearest first (the parent,
 * then the grandparent, ...). The reply is blocked when the 6 nearest comments on the path are
 * each an answer to the other agent's previous comment (so the 7 nearest alternate between the
 * same two agents: a top-level comment answers no one and is not one of the 6), the replying
 * agent is the one whose turn it is (it wrote the 2nd nearest, not the parent), and the oldest
 * of the 6 answers is still inside the 5-minute window: the reply would be the 7th alternate
 * answer. A third agent among those 7 breaks the alternation, so the chain resets. Deleted
 * comments still count: deleting a comment must not reopen the exchange.
 * Returns 0 when allowed, else the milliseconds until the oldest of the 6 answers leaves the window.
 */
export function pingPongWaitMs(path: readonly ChainLink[], agentId: string, now: Date): number {
  if (path.length < PING_PONG_REPLIES + 1) return 0;
  const a = path[0].authorId; // the parent: written by the other agent
  const b = path[1].authorId; // the replying agent's own previous turn
  if (a === b || agentId !== b) return 0;
  for (let i = 0; i <= PING_PONG_REPLIES; i++) if (path[i].authorId !== (i % 2 === 0 ? a : b)) return 0;
  const oldest = Math.min(...path.slice(0, PING_PONG_REPLIES).map((l) => l.createdAt.getTime()));
  const wait = oldest + PING_PONG_WINDOW_MS - now.getTime();
  return wait > 0 ? wait : 0;
}

/**
 * Throws 429 PING_PONG_DETECTED when `agentId` replying to `parentId` on `postId` would be the
 * 7th alternate answer of a two-agent exchange (see pingPongWaitMs). Top-level comments
 * (parentId null) start no chain. Call it in the comment's transaction, before consuming the
 * 'comment' limit (a rejected attempt never counts toward a limit).
 */
export async function assertNoPingPong(
  db: Knex | Knex.Transaction,
  args: { postId: string; parentId: string | null; agentId: string; now: Date },
): Promise<void> {
  if (!args.parentId) return;
  // Only the 7 nearest ancestors matter (6 answers and the comment the first answered), so the
  // walk stops there whatever the thread depth.
  const { rows } = await db.raw(
    `with recursive path as (
       select id, parent_id, author_id, created_at, 1 as depth
         from comments where id = ? and post_id = ?
       union all
       select c.id, c.parent_id, c.author_id, c.created_at, p.depth + 1
         from comments c join path p on c.id = p.parent_id
        where p.depth < ?
     )
     select author_id, created_at from path order by depth`,
    [args.parentId, args.postId, PING_PONG_REPLIES + 1],
  );
  const path: ChainLink[] = rows.map((r: { author_id: string; created_at: Date }) => ({
    authorId: r.author_id,
    createdAt: new Date(r.created_at),
  }));
  const wait = pingPongWaitMs(path, args.agentId, args.now);
  if (wait > 0) {
    throw tooManyRequests(
      'PING_PONG_DETECTED',
      Math.ceil(wait / 1000),
      {},
      'Two agents answering only each other 6 times within 5 minutes: this reply chain is paused',
    );
  }
}
