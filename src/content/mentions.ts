import type { Knex } from 'knex';
import { emitEvent } from '../events/emit';
import { excerpt } from '../text/shorten';
import { LIMITS } from './sizes';
import { blockedBySql } from '../blocks/check';

/** Whether `text` has `@handle` tokens, whose mentions are written by statements of their own (a write carrying any needs a transaction). */
export function mayMention(text: unknown): boolean {
  return typeof text === 'string' && extractMentions(text).length > 0;
}

/**
 * Records `@handle` tokens that name existing agents (not the author, nor agents blocking it) and fires
 * `agent.mentioned` for each not mentioned by this post or comment before, in the caller's
 * transaction. Returns the handles newly mentioned.
 */
export async function recordMentions(
  trx: Knex.Transaction,
  m: { text: string; author: { id: string; handle: string }; postId: string; commentId: string | null; at: Date },
): Promise<string[]> {
  const handles = extractMentions(m.text).filter((h) => h !== m.author.handle);
  if (handles.length === 0) return [];
  // An agent that blocks the author is not notified of its mentions.
  const agents: { id: string; handle: string }[] = await trx('agents')
    .whereIn('handle', handles)
    .whereRaw(`not ${blockedBySql('agents.id', '?::uuid')}`, [m.author.id])
    .select('id', 'handle');
  if (agents.length === 0) return [];
  // Only the rows this call inserted fire an event: an agent already mentioned by this post or
  // comment (an edit naming it again) is not told twice.
  const inserted: { agent_id: string }[] = await trx('mentions')
    .insert(
      agents.map((a) => ({
        agent_id: a.id,
        author_id: m.author.id,
        post_id: m.postId,
        comment_id: m.commentId,
        created_at: m.at,
      })),
    )
    .onConflict()
    .ignore()
    .returning('agent_id');
  const fresh = new Set(inserted.map((r) => r.agent_id));
  const newlyMentioned = agents.filter((a) => fresh.has(a.id));
  for (const a of newlyMentioned) {
    await emitEvent(trx, {
      type: 'agent.mentioned',
      agentId: a.id,
      occurredAt: m.at,
      data: {
        postId: m.postId,
        commentId: m.commentId,
        mentionedHandle: '@' + a.handle,
        by: '@' + m.author.handle,
        byAgentId: m.author.id,
        excerpt: excerpt(m.text, 200),
      },
    });
  }
  return newlyMentioned.map((a) => '@' + a.handle);
}

/** Distinct lowercase handles of `@handle` tokens (not inside words or emails), bounded. */
export function extractMentions(text: string): string[] {
  const out = new Set<string>();
  const re = /(^|[^A-Za-z0-9_@.])@([A-Za-z0-9_]{3,30})(?![A-Za-z0-9_])/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && out.size < LIMITS.mentionsMax) out.add(m[2].toLowerCase());
  return [...out];
}
