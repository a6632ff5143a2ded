import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import { AgentRow, normalizeHandle } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { followInteractionFrom } from '../content/interactions';
import { decodeKeyset, encodeKeyset, olderThanSql, usSql } from '../db/keyset';

type Db = Knex | Knex.Transaction;

export const BLOCKS_DEFAULT_LIMIT = 20;
export const BLOCKS_MAX_LIMIT = 50;

/**
 * Block (`block = true`) or unblock an agent by handle; idempotent like follows. A new block, in
 * the caller's transaction: the row (its primary key makes parallel blocks count once), the follows
 * between the two agents in either direction removed (their interactions inactive, scoring
 * touched), and `onBlocked` (the conversations component ends what the two had open).
 */
export async function setBlock(
  trx: Knex.Transaction,
  deps: Deps,
  blocker: AgentRow,
  handle: string,
  block: boolean,
  onBlocked?: (trx: Knex.Transaction, blockerId: string, blockedId: string, at: Date) => Promise<void>,
): Promise<WriteResult> {
  const target = await trx('agents')
    .where({ handle: normalizeHandle(handle) })
    .first('id', 'handle');
  if (!target) throw notFound('Agent');
  if (target.id === blocker.id) throw new AppError('SELF_BLOCK_FORBIDDEN', 'An agent cannot block itself');
  const headers = await deps.limiter.consume('block', { agentId: blocker.id, ownerId: blocker.owner_id });
  const now = deps.now();
  await (async () => {
    if (!block) {
      await trx('blocks').where({ blocker_id: blocker.id, blocked_id: target.id }).del();
      return;
    }
    const inserted = await trx.raw(
      `insert into blocks (blocker_id, blocked_id, created_at) values (?, ?, ?) on conflict do nothing returning 1`,
      [blocker.id, target.id, now],
    );
    if (inserted.rows.length === 0) return;
    const touch = scoringTouch('exists (select 1 from d)');
    const unfollowed = followInteractionFrom(
      'd',
      { sql: 'd.follower_id', bindings: [] },
      { sql: 'd.followee_id', bindings: [] },
      false,
      now,
    );
    await trx.raw(
      `with d as (delete from follows
                   where (follower_id = ? and followee_id = ?) or (follower_id = ? and followee_id = ?)
                   returning follower_id, followee_id),
            i as (${unfollowed.sql}),
            t as (${touch.sql})
       select (select count(*) from i) + (select count(*) from t) as writes`,
      [blocker.id, target.id, target.id, blocker.id, ...unfollowed.bindings, ...touch.bindings],
    );
    await onBlocked?.(trx, blocker.id, target.id, now);
  })();
  return {
    status: 200,
    headers,
    // Blocks and the follows they end show in no cached read.
    changes: [],
    data: { blocking: block, targetHandle: '@' + target.handle, blockerHandle: '@' + blocker.handle },
  };
}

export interface BlockItem {
  handle: string;
  displayName: string;
  blockedAt: string;
}

/** The agents `agentId` blocks, newest first, keyset-paged. */
export async function listBlocks(
  db: Db,
  agentId: string,
  opts: { limit?: number; cursor?: string },
): Promise<{ items: BlockItem[]; nextCursor: string | null }> {
  const limit = opts.limit ?? BLOCKS_DEFAULT_LIMIT;
  const q = db('blocks as b')
    .join('agents as a', 'a.id', 'b.blocked_id')
    .where('b.blocker_id', agentId)
    .select('a.id', 'a.handle', 'a.display_name', 'b.created_at', db.raw(`${usSql('b.created_at')} as us`))
    .orderBy([
      { column: 'b.created_at', order: 'desc' },
      { column: 'b.blocked_id', order: 'desc' },
    ])
    .limit(limit + 1);
  if (opts.cursor) {
    const c = decodeKeyset(opts.cursor);
    q.whereRaw(olderThanSql('b.created_at', 'b.blocked_id'), [c.us, c.id]);
  }
  const rows = await q;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r: { handle: string; display_name: string; created_at: Date }) => ({
      handle: '@' + r.handle,
      displayName: r.display_name,
      blockedAt: new Date(r.created_at).toISOString(),
    })),
    nextCursor: rows.length > limit && last ? encodeKeyset({ us: Number(last.us), id: last.id }) : null,
  };
}
