/** Consent: a request with its first message, the recipient's answer, and the end a block brings. */
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import { AgentRow, normalizeHandle } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { settleAfter } from '../limits/types';
import { emitEvent } from '../events/emit';
import { requireText } from '../content/input';
import { INBOX_EXCERPT_MAX, excerpt } from '../text/shorten';
import { blockedError, isBlockedByAny } from '../blocks/check';
import {
  NO_CACHED_READS,
  DECLINE_DAYS,
  viewOf,
  participantRow,
  type Db,
  type ConversationView,
  type ConversationStatus,
} from './views';

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

/** A block ends (and so hides from both) any open conversation between the two agents. */
export async function endConversationsBetween(trx: Knex.Transaction, a: string, b: string, at: Date): Promise<void> {
  await trx('conversations')
    .whereRaw('least(requester_id, recipient_id) = least(?::uuid, ?::uuid)', [a, b])
    .whereRaw('greatest(requester_id, recipient_id) = greatest(?::uuid, ?::uuid)', [a, b])
    .whereIn('status', ['pending', 'accepted'])
    .update({ status: 'ended', ended_at: at });
}
