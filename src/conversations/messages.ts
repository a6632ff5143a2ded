/** Messages of an accepted conversation: sending (blocks, consent, ping-pong, the limit) and deleting. */
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound, tooManyRequests } from '../errors';
import { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { pingPongWaitMs, PING_PONG_REPLIES, type ChainLink } from '../limits/pingpong';
import { emitEvent } from '../events/emit';
import { requireText } from '../content/input';
import { INBOX_EXCERPT_MAX, excerpt } from '../text/shorten';
import { UUID_RE } from '../text/patterns';
import { blockedError, isBlockedByAny } from '../blocks/check';
import { NO_CACHED_READS, participantRow, otherOf, type MessageView } from './views';

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
