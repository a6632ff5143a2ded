/** What an agent (or its owner's dashboard) reads of its conversations, and marking them read. */
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { decodeKeyset, encodeKeyset, olderThanSql, usSql } from '../db/keyset';
import {
  MESSAGE_DELETED_BODY,
  NO_CACHED_READS,
  CONVERSATIONS_DEFAULT_LIMIT,
  viewOf,
  viewsOf,
  strip,
  participantRow,
  type Db,
  type ConversationView,
  type MessageView,
  type ConversationStatus,
} from './views';

/** The agent's conversations (not ended), by last activity, each with its unread count. */
export async function listConversations(
  db: Db,
  agentId: string,
  opts: { limit?: number; cursor?: string; status?: ConversationStatus },
): Promise<{ items: ConversationView[]; nextCursor: string | null }> {
  const limit = opts.limit ?? CONVERSATIONS_DEFAULT_LIMIT;
  const cursor = opts.cursor ? decodeKeyset(opts.cursor) : null;
  const rows = await db('conversations as c')
    .where((w) => w.where('c.requester_id', agentId).orWhere('c.recipient_id', agentId))
    .whereNot('c.status', 'ended')
    .modify((q) => {
      if (opts.status) q.where('c.status', opts.status);
      if (cursor) q.whereRaw(olderThanSql('c.last_message_at', 'c.id'), [cursor.us, cursor.id]);
    })
    .orderBy([
      { column: 'c.last_message_at', order: 'desc' },
      { column: 'c.id', order: 'desc' },
    ])
    .limit(limit + 1)
    .select('c.id');
  const ids = rows.map((r: { id: string }) => r.id);
  const views = ids.length ? await viewsOf(db, agentId, ids.slice(0, limit)) : [];
  const byId = new Map(views.map((v) => [v.id, v]));
  const page = ids.slice(0, limit).map((i: string) => byId.get(i)!);
  const last = page[page.length - 1];
  return {
    items: page.map(strip),
    nextCursor: ids.length > limit && last ? encodeKeyset({ us: last.us, id: last.id }) : null,
  };
}

/**
 * Messages of a conversation, newest first, keyset-paged, as `agentId` (one of its two agents)
 * sees them: through its key, or its owner's dashboard. Reading changes nothing (markRead does).
 */
export async function listMessages(
  db: Db,
  viewer: { agentId: string },
  id: string,
  opts: { limit?: number; cursor?: string },
): Promise<{ items: MessageView[]; nextCursor: string | null; conversation: ConversationView }> {
  await participantRow(db, id, viewer.agentId);
  const limit = opts.limit ?? CONVERSATIONS_DEFAULT_LIMIT;
  const cursor = opts.cursor ? decodeKeyset(opts.cursor) : null;
  const rows = await db('conversation_messages as m')
    .join('agents as a', 'a.id', 'm.author_id')
    .where('m.conversation_id', id)
    .modify((q) => {
      if (cursor) q.whereRaw(olderThanSql('m.created_at', 'm.id'), [cursor.us, cursor.id]);
    })
    .orderBy([
      { column: 'm.created_at', order: 'desc' },
      { column: 'm.id', order: 'desc' },
    ])
    .limit(limit + 1)
    .select('m.*', 'a.handle', 'a.display_name', db.raw(`${usSql('m.created_at')} as us`));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(
      (m: {
        id: string;
        handle: string;
        display_name: string;
        body: string;
        deleted_at: Date | null;
        created_at: Date;
      }) => ({
        id: m.id,
        conversationId: id,
        author: { handle: '@' + m.handle, displayName: m.display_name },
        body: m.deleted_at ? MESSAGE_DELETED_BODY : m.body,
        deleted: !!m.deleted_at,
        createdAt: new Date(m.created_at).toISOString(),
      }),
    ),
    nextCursor: rows.length > limit && last ? encodeKeyset({ us: Number(last.us), id: last.id }) : null,
    conversation: await viewOf(db, id, viewer.agentId),
  };
}

/** The agent has read everything the other side sent so far: its unread count drops to 0. */
export async function markRead(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  id: string,
): Promise<WriteResult<ConversationView>> {
  const c = await participantRow(trx, id, agent.id);
  const col = c.requester_id === agent.id ? 'requester_read_at' : 'recipient_read_at';
  await trx('conversations')
    .where({ id })
    .update({ [col]: trx.raw(`greatest(coalesce(??, '-infinity'), ?)`, [col, deps.now()]) });
  return { status: 200, changes: NO_CACHED_READS, data: await viewOf(trx, id, agent.id) };
}
