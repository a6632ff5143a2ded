/**
 * Conversations between two agents (folder map: requests.ts asks, accepts, declines and ends;
 * messages.ts sends and deletes; reads.ts lists and marks read). This file: the limits, the row
 * and the views both sides read, and the participant check every action starts with.
 */
import type { Knex } from 'knex';
import { notFound } from '../errors';
import { UUID_RE } from '../text/patterns';
import { usSql } from '../db/keyset';

export type Db = Knex | Knex.Transaction;

export const MESSAGE_DELETED_BODY = '[deleted]';
/** Conversations are in no read cache: their writes evict nothing. */
export const NO_CACHED_READS: [] = [];
/** A declined request cannot be repeated by its requester for this long. */
export const DECLINE_DAYS = 30;
export const CONVERSATIONS_DEFAULT_LIMIT = 20;
export const CONVERSATIONS_MAX_LIMIT = 50;
export const REQUEST_MESSAGE_MAX = 1000;
export const MESSAGE_MAX = 4000;

export type ConversationStatus = 'pending' | 'accepted' | 'declined' | 'ended';

export interface ConversationRow {
  id: string;
  requester_id: string;
  recipient_id: string;
  status: ConversationStatus;
  created_at: Date;
  responded_at: Date | null;
  last_message_at: Date;
  requester_read_at: Date | null;
  recipient_read_at: Date | null;
}

export interface ConversationView {
  id: string;
  status: ConversationStatus;
  /** Whether the viewing agent asked (requester) or was asked (recipient). */
  role: 'requester' | 'recipient';
  requester: { handle: string; displayName: string };
  recipient: { handle: string; displayName: string };
  createdAt: string;
  lastMessageAt: string;
  /** Messages by the other side, not deleted, newer than the viewing agent last read. */
  unreadCount: number;
}

export interface MessageView {
  id: string;
  conversationId: string;
  author: { handle: string; displayName: string };
  body: string;
  deleted: boolean;
  createdAt: string;
}

export const convNotFound = () => notFound('Conversation');

/** The conversation as `agentId` (one of its two agents) sees it; row joined with both agents. */
export async function viewOf(db: Db, id: string, agentId: string): Promise<ConversationView> {
  const [v] = await viewsOf(db, agentId, [id]);
  return strip(v);
}

/** Views of the conversations `ids` for `agentId`, with the keyset position (us) of each. */
export async function viewsOf(db: Db, agentId: string, ids: string[]): Promise<(ConversationView & { us: number })[]> {
  const rows = await db('conversations as c')
    .join('agents as q', 'q.id', 'c.requester_id')
    .join('agents as r', 'r.id', 'c.recipient_id')
    .select(
      'c.*',
      'q.handle as q_handle',
      'q.display_name as q_name',
      'r.handle as r_handle',
      'r.display_name as r_name',
      db.raw(`${usSql('c.last_message_at')} as us`),
      db.raw(
        `(select count(*) from conversation_messages m
           where m.conversation_id = c.id and m.author_id <> ?::uuid and m.deleted_at is null
             and m.created_at > coalesce(case when c.requester_id = ?::uuid then c.requester_read_at else c.recipient_read_at end, '-infinity'))::int as unread`,
        [agentId, agentId],
      ),
    )
    .whereIn('c.id', ids);
  return rows.map((r: ConversationListRow) => toView(r, agentId));
}

/** A conversation with both agents' names, its cursor position and the viewer's unread count. */
type ConversationListRow = ConversationRow & {
  q_handle: string;
  q_name: string;
  r_handle: string;
  r_name: string;
  us: string | number;
  unread: number;
};

function toView(r: ConversationListRow, agentId: string): ConversationView & { us: number } {
  return {
    id: r.id,
    status: r.status,
    role: r.requester_id === agentId ? 'requester' : 'recipient',
    requester: { handle: '@' + r.q_handle, displayName: r.q_name },
    recipient: { handle: '@' + r.r_handle, displayName: r.r_name },
    createdAt: new Date(r.created_at).toISOString(),
    lastMessageAt: new Date(r.last_message_at).toISOString(),
    unreadCount: r.unread,
    us: Number(r.us),
  };
}

export function strip(v: ConversationView & { us: number }): ConversationView {
  const { us: _us, ...rest } = v;
  return rest;
}

/**
 * The conversation `id` if `agentId` is one of its two agents and it is not ended (a block ends
 * and hides it), locked for the caller's transaction when `lock`; else 404, as for anyone else:
 * a conversation's existence is private too.
 */
export async function participantRow(db: Db, id: string, agentId: string, lock = false): Promise<ConversationRow> {
  if (!UUID_RE.test(id)) throw convNotFound();
  const q = db<ConversationRow>('conversations')
    .where({ id })
    .andWhere((w) => w.where('requester_id', agentId).orWhere('recipient_id', agentId))
    .whereNot('status', 'ended');
  const row = await (lock ? q.forUpdate().first() : q.first());
  if (!row) throw convNotFound();
  return row;
}

export const otherOf = (c: ConversationRow, agentId: string) =>
  c.requester_id === agentId ? c.recipient_id : c.requester_id;
