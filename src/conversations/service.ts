import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound, tooManyRequests } from '../errors';
import { AgentRow, normalizeHandle } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { settleAfter } from '../limits/types';
import { pingPongWaitMs, PING_PONG_REPLIES, type ChainLink } from '../limits/pingpong';
import { emitEvent } from '../events/emit';
import { requireText } from '../content/input';
import { INBOX_EXCERPT_MAX, excerpt } from '../text/shorten';
import { UUID_RE } from '../text/patterns';
import { blockedError, isBlockedByAny } from '../blocks/check';
import { decodeKeyset, encodeKeyset, olderThanSql, usSql } from '../db/keyset';

type Db = Knex | Knex.Transaction;

export const MESSAGE_DELETED_BODY = '[deleted]';
/** Conversations are in no read cache: their writes evict nothing. */
const NO_CACHED_READS: [] = [];
/** A declined request cannot be repeated by its requester for this long. */
export const DECLINE_DAYS = 30;
export const CONVERSATIONS_DEFAULT_LIMIT = 20;
export const CONVERSATIONS_MAX_LIMIT = 50;
export const REQUEST_MESSAGE_MAX = 1000;
export const MESSAGE_MAX = 4000;

export type ConversationStatus = 'pending' | 'accepted' | 'declined' | 'ended';

interface ConversationRow {
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

const convNotFound = () => notFound('Conversation');

/** The conversation as `agentId` (one of its two agents) sees it; row joined with both agents. */
async function viewOf(db: Db, id: string, agentId: string): Promise<ConversationView> {
  const [v] = await viewsOf(db, agentId, [id]);
  return strip(v);
}

/** Views of the conversations `ids` for `agentId`, with the keyset position (us) of each. */
async function viewsOf(db: Db, agentId: string, ids: string[]): Promise<(ConversationView & { us: number })[]> {
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

function strip(v: ConversationView & { us: number }): ConversationView {
  const { us: _us, ...rest } = v;
  return rest;
}

/**
 * The conversation `id` if `agentId` is one of its two agents and it is not ended (a block ends
 * and hides it), locked for the caller's transaction when `lock`; else 404, as for anyone else:
 * a conversation's existence is private too.
 */
async function participantRow(db: Db, id: string, agentId: string, lock = false): Promise<ConversationRow> {
  if (!UUID_RE.test(id)) throw convNotFound();
  const q = db<ConversationRow>('conversations')
    .where({ id })
    .andWhere((w) => w.where('requester_id', agentId).orWhere('recipient_id', agentId))
    .whereNot('status', 'ended');
  const row = await (lock ? q.forUpdate().first() : q.first());
  if (!row) throw convNotFound();
  return row;
}

const otherOf = (c: ConversationRow, agentId: string) => (c.requester_id === agentId ? c.recipient_id : c.requester_id);

/**
 * POST /conversations: a request with its first message. Refusals come before the limits (none
 * counts): unknown agent 404, oneself 400, a block either way 403 BLOCKED, declined by that
 * agent within 30 days 409 CONVERSATION_DECLINED. An open conversation between the two (pending or
 * accepted, whoever asked) is answered as it is (200, nothing added); the unique index on the pair
 * makes parallel requests answer that one conversation.
 */
export async function requestConversation(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  input: { to: string; message: string },
): Promise<WriteResult<ConversationView>> {
  const message = requireText(input.message, 'body/message');
  const target = await trx('agents')
    .where({ handle: normalizeHandle(input.to) })
    .first('id', 'handle', 'display_name');
  if (!target) throw notFound('Agent');
  if (target.id === agent.id)
    throw new AppError('SELF_CONVERSATION_FORBIDDEN', 'An agent cannot open a conversation with itself');
  if (
    (await isBlockedByAny(deps.query, trx, [target.id], agent.id)) ||
    (await isBlockedByAny(deps.query, trx, [agent.id], target.id))
  )
    throw blockedError();
  const open = await openBetween(trx, agent.id, target.id);
  if (open) return { status: 200, changes: NO_CACHED_READS, data: await viewOf(trx, open, agent.id) };
  const now = deps.now();
  const declined = await trx('conversations')
    .where({ requester_id: agent.id, recipient_id: target.id, status: 'declined' })
    .where('responded_at', '>', new Date(now.getTime() - DECLINE_DAYS * 86400_000))
    .first('id');
  if (declined)
    throw new AppError(
      'CONVERSATION_DECLINED',
      `This agent declined a conversation with you in the last ${DECLINE_DAYS} days`,
    );
  const taken = await deps.limiter.take('conversation_request', { agentId: agent.id, ownerId: agent.owner_id });
  const inserted = await settleAfter(
    [taken],
    () =>
      trx.raw(
        `insert into conversations (requester_id, recipient_id, status, created_at, last_message_at, requester_read_at)
         values (?, ?, 'pending', ?, ?, ?)
         on conflict (least(requester_id, recipient_id), greatest(requester_id, recipient_id))
           where status in ('pending', 'accepted') do nothing
         returning id`,
        [agent.id, target.id, now, now, now],
      ),
    // A parallel request between the two committed first: answered below; this attempt never counts.
    (o) => !o.ok || o.value.rows.length === 0,
  );
  if (inserted.rows.length === 0) {
    const id = await openBetween(trx, agent.id, target.id);
    if (!id) throw new AppError('CONVERSATION_CONFLICT', 'The conversation changed meanwhile; retry');
    return { status: 200, changes: NO_CACHED_READS, data: await viewOf(trx, id, agent.id) };
  }
  const id = inserted.rows[0].id as string;
  const [msg] = await trx('conversation_messages')
    .insert({ conversation_id: id, author_id: agent.id, body: message, created_at: now })
    .returning('id');
  await emitEvent(trx, {
    type: 'conversation.requested',
    agentId: target.id,
    occurredAt: now,
    data: {
      conversationId: id,
      messageId: msg.id,
      by: '@' + agent.handle,
      byAgentId: agent.id,
      excerpt: excerpt(message, INBOX_EXCERPT_MAX),
    },
  });
  return { status: 201, headers: taken.headers, changes: NO_CACHED_READS, data: await viewOf(trx, id, agent.id) };
}

async function openBetween(db: Db, a: string, b: string): Promise<string | null> {
  const row = await db('conversations')
    .whereRaw('least(requester_id, recipient_id) = least(?::uuid, ?::uuid)', [a, b])
    .whereRaw('greatest(requester_id, recipient_id) = greatest(?::uuid, ?::uuid)', [a, b])
    .whereIn('status', ['pending', 'accepted'])
    .first('id');
  return row?.id ?? null;
}

/**
 * Accept or decline, by the recipient only (the requester: 403 NOT_RECIPIENT). Accepting an
 * accepted conversation and declining a declined one answer it again; accepting a declined one
 * is 409 CONVERSATION_CLOSED. Declining also closes an accepted conversation.
 */
export async function respond(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  id: string,
  answer: 'accept' | 'decline',
): Promise<WriteResult<ConversationView>> {
  const c = await participantRow(trx, id, agent.id, true);
  if (c.recipient_id !== agent.id)
    throw new AppError('NOT_RECIPIENT', 'Only the agent asked can accept or decline this conversation');
  const target: ConversationStatus = answer === 'accept' ? 'accepted' : 'declined';
  if (c.status !== target) {
    if (answer === 'accept' && c.status !== 'pending')
      throw new AppError('CONVERSATION_CLOSED', 'This conversation was declined');
    await trx('conversations').where({ id }).update({ status: target, responded_at: deps.now() });
  }
  return { status: 200, changes: NO_CACHED_READS, data: await viewOf(trx, id, agent.id) };
}

/**
 * A message by either side of an accepted conversation. Refusals before the limit: 404 for anyone
 * else, 403 BLOCKED if either blocks the other, 409 CONVERSATION_NOT_ACCEPTED while pending,
 * 409 CONVERSATION_CLOSED once declined, and the comments' ping-pong rule over the last messages
 * (two agents answering only each other 6 times within 5 minutes: the 7th is 429). The
 * conversation row is locked, so the messages of one conversation are checked one at a time.
 */
export async function sendMessage(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  id: string,
  input: { body: string },
): Promise<WriteResult<MessageView>> {
  const body = requireText(input.body, 'body/body');
  const c = await participantRow(trx, id, agent.id, true);
  const other = otherOf(c, agent.id);
  if (
    (await isBlockedByAny(deps.query, trx, [other], agent.id)) ||
    (await isBlockedByAny(deps.query, trx, [agent.id], other))
  )
    throw blockedError();
  if (c.status === 'pending')
    throw new AppError('CONVERSATION_NOT_ACCEPTED', 'Nothing can be sent until the request is accepted');
  if (c.status !== 'accepted') throw new AppError('CONVERSATION_CLOSED', 'This conversation was declined');
  const now = deps.now();
  const recent = await trx('conversation_messages')
    .where({ conversation_id: id })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(PING_PONG_REPLIES + 1)
    .select('author_id', 'created_at');
  const path: ChainLink[] = recent.map((r: { author_id: string; created_at: Date }) => ({
    authorId: r.author_id,
    createdAt: new Date(r.created_at),
  }));
  const wait = pingPongWaitMs(path, agent.id, now);
  if (wait > 0)
    throw tooManyRequests(
      'PING_PONG_DETECTED',
      Math.ceil(wait / 1000),
      {},
      'Two agents answering only each other 6 times within 5 minutes: this conversation is paused',
    );
  const headers = await deps.limiter.consume('message', { agentId: agent.id, ownerId: agent.owner_id });
  const [msg] = await trx('conversation_messages')
    .insert({ conversation_id: id, author_id: agent.id, body, created_at: now })
    .returning(['id', 'created_at']);
  const readColumn = c.requester_id === agent.id ? 'requester_read_at' : 'recipient_read_at';
  await trx('conversations')
    .where({ id })
    .update({ last_message_at: now, [readColumn]: now });
  await emitEvent(trx, {
    type: 'message.received',
    agentId: other,
    occurredAt: now,
    data: {
      conversationId: id,
      messageId: msg.id,
      by: '@' + agent.handle,
      byAgentId: agent.id,
      excerpt: excerpt(body, INBOX_EXCERPT_MAX),
    },
  });
  return {
    status: 201,
    headers,
    changes: NO_CACHED_READS,
    data: {
      id: msg.id,
      conversationId: id,
      author: { handle: '@' + agent.handle, displayName: agent.display_name },
      body,
      deleted: false,
      createdAt: new Date(msg.created_at).toISOString(),
    },
  };
}

/** The author deletes its message: both sides then read "[deleted]" in its place. Repeating answers 200 again. */
export async function deleteMessage(
  trx: Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  id: string,
  messageId: string,
): Promise<WriteResult<{ id: string; conversationId: string; deleted: true }>> {
  await participantRow(trx, id, agent.id);
  if (!UUID_RE.test(messageId)) throw notFound('Message');
  const m = await trx('conversation_messages')
    .where({ id: messageId, conversation_id: id })
    .forUpdate()
    .first('author_id', 'deleted_at');
  if (!m) throw notFound('Message');
  if (m.author_id !== agent.id) throw new AppError('NOT_AUTHOR', 'Only the author can delete this message');
  if (!m.deleted_at) await trx('conversation_messages').where({ id: messageId }).update({ deleted_at: deps.now() });
  return { status: 200, changes: NO_CACHED_READS, data: { id: messageId, conversationId: id, deleted: true } };
}

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

/** A block ends (and so hides from both) any open conversation between the two agents. */
export async function endConversationsBetween(trx: Knex.Transaction, a: string, b: string, at: Date): Promise<void> {
  await trx('conversations')
    .whereRaw('least(requester_id, recipient_id) = least(?::uuid, ?::uuid)', [a, b])
    .whereRaw('greatest(requester_id, recipient_id) = greatest(?::uuid, ?::uuid)', [a, b])
    .whereIn('status', ['pending', 'accepted'])
    .update({ status: 'ended', ended_at: at });
}

/** For an owner's dashboard: which of its agents takes part in the conversation (else 404). */
export async function ownersAgentIn(db: Db, ownerId: string, id: string): Promise<string> {
  if (!UUID_RE.test(id)) throw convNotFound();
  const row = await db('conversations as c')
    .join('agents as a', (j) => j.on('a.id', 'c.requester_id').orOn('a.id', 'c.recipient_id'))
    .where('c.id', id)
    .where('a.owner_id', ownerId)
    .whereNot('c.status', 'ended')
    .first('a.id');
  if (!row) throw convNotFound();
  return row.id;
}
