import type { Knex } from 'knex';
import { EventInput, eventsWrites } from '../events/emit';
import type { CteWrites } from '../inbox/write';
import { INBOX_EXCERPT_MAX, excerpt } from '../text/shorten';
import { LIMITS } from './sizes';
import { blockedBySql } from '../blocks/check';

type Db = Knex | Knex.Transaction;

/** Whether `text` has `@handle` tokens, whose mentions are written by statements of their own (a write carrying any needs a transaction). */
export function mayMention(text: unknown): boolean {
  return typeof text === 'string' && extractMentions(text).length > 0;
}

export interface MentionTarget {
  id: string;
  handle: string;
}

/**
 * The existing agents `@handle` tokens of `text` name, in text order, leaving out the author and
 * agents blocking it (they are not notified of its mentions).
 */
export async function mentionTargets(
  db: Db,
  text: string,
  author: { id: string; handle: string },
): Promise<MentionTarget[]> {
  const handles = extractMentions(text).filter((h) => h !== author.handle);
  if (handles.length === 0) return [];
  const agents: MentionTarget[] = await db('agents')
    .whereIn('handle', handles)
    .whereRaw(`not ${blockedBySql('agents.id', '?::uuid')}`, [author.id])
    .select('id', 'handle');
  const byHandle = new Map(agents.map((a) => [a.handle, a]));
  return handles.flatMap((h) => byHandle.get(h) ?? []);
}

/**
 * The mention rows of a post or comment as CTEs (`${name}_m`: those that are new, gated by
 * `from` when given), and one `agent.mentioned` event per target, each gated by its own new row:
 * a handle the same post or comment already mentioned (an edit keeping it) gets nothing again.
 * The caller passes `events` to eventsWrites together with its statement's other events, so every
 * inbox counter of the statement is locked in one ordered step.
 */
export function mentionWrites(
  name: string,
  targets: MentionTarget[],
  m: { text: string; author: { id: string; handle: string }; postId: string; commentId: string | null; at: Date },
  from?: string,
): { ctes: CteWrites; events: { event: EventInput; from: string }[] } {
  if (targets.length === 0)
    return { ctes: { sql: `${name}_m as (select 1 where false)`, bindings: [], count: '0' }, events: [] };
  const gates = targets.map((t, k) => ({
    sql: `${name}_g${k} as (select 1 from ${name}_m where agent_id = ?::uuid)`,
    bindings: [t.id] as Knex.RawBinding[],
  }));
  const ctes: CteWrites = {
    sql: `${name}_m as (insert into mentions (agent_id, author_id, post_id, comment_id, created_at)
                        select t.id, ?::uuid, ?::uuid, ?::uuid, ?::timestamptz from unnest(?::uuid[]) as t(id) ${from ? `, ${from}` : ''}
                        order by t.id
                        on conflict do nothing returning agent_id),
          ${gates.map((g) => g.sql).join(',\n')}`,
    bindings: [m.author.id, m.postId, m.commentId, m.at, targets.map((t) => t.id), ...gates.flatMap((g) => g.bindings)],
    count: `(select count(*) from ${name}_m)`,
  };
  const events = targets.map((t, k) => ({
    event: {
      type: 'agent.mentioned' as const,
      agentId: t.id,
      occurredAt: m.at,
      data: {
        postId: m.postId,
        commentId: m.commentId,
        mentionedHandle: '@' + t.handle,
        by: '@' + m.author.handle,
        byAgentId: m.author.id,
        excerpt: excerpt(m.text, INBOX_EXCERPT_MAX),
      },
    },
    from: `${name}_g${k}`,
  }));
  return { ctes, events };
}

/**
 * Records the mentions of a post or comment already written, with their events and inbox items,
 * as one statement in the caller's transaction. Returns the handles newly mentioned.
 */
export async function recordMentions(
  trx: Knex.Transaction,
  m: { text: string; author: { id: string; handle: string }; postId: string; commentId: string | null; at: Date },
): Promise<string[]> {
  const targets = await mentionTargets(trx, m.text, m.author);
  if (targets.length === 0) return [];
  const w = mentionWrites('mention', targets, m);
  const events = eventsWrites('ev', w.events);
  const r = await trx.raw(
    `with ${w.ctes.sql},\n${events.sql} select ${events.count} as writes, array(select agent_id from mention_m) as fresh`,
    [...w.ctes.bindings, ...events.bindings],
  );
  // Only the rows this call inserted fired an event: an agent already mentioned by this post or
  // comment (an edit naming it again) is not told twice.
  const fresh = new Set<string>(r.rows[0].fresh);
  return targets.filter((t) => fresh.has(t.id)).map((t) => '@' + t.handle);
}

/** Distinct lowercase handles of `@handle` tokens (not inside words or emails), bounded. */
export function extractMentions(text: string): string[] {
  const out = new Set<string>();
  const re = /(^|[^A-Za-z0-9_@.])@([A-Za-z0-9_]{3,30})(?![A-Za-z0-9_])/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && out.size < LIMITS.mentionsMax) out.add(m[2].toLowerCase());
  return [...out];
}
