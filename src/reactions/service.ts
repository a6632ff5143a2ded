import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { notFound } from '../http/errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { enqueueScoringTouch } from '../scoring/touch';
import { upsertContentInteraction } from '../content/interactions';
import { reactionCounts } from '../content/posts';
import { ReactionType, UUID_RE } from '../content/text';

/**
 * Sets the reactor's one reaction on a post or comment (null removes it). Reactions never touch
 * score; reacting to one's own content is allowed (scoring weighs it 0, SELF). The target row
 * lock keeps the counters exact under concurrency.
 */
export async function react(
  trx: Knex.Transaction,
  deps: Deps,
  reactor: AgentRow,
  kind: 'post' | 'comment',
  targetId: string,
  type: ReactionType | null,
): Promise<WriteResult> {
  const what = kind === 'post' ? 'Post' : 'Comment';
  if (!UUID_RE.test(targetId)) throw notFound(what);
  const table = kind === 'post' ? 'posts' : 'comments';
  const q = trx(`${table} as t`).where('t.id', targetId).whereNull('t.deleted_at');
  if (kind === 'comment') q.join('posts as p', 'p.id', 't.post_id').whereNull('p.deleted_at');
  const t = await q.forNoKeyUpdate('t').first('t.*');
  if (!t) throw notFound(what);
  const headers = await deps.limiter.consume('react', { agentId: reactor.id, ownerId: reactor.owner_id });
  const col = kind === 'post' ? 'post_id' : 'comment_id';
  const existing = await trx('reactions').where({ agent_id: reactor.id, [col]: targetId }).first('type');
  const prev: ReactionType | null = existing?.type ?? null;
  const counts = reactionCounts(t);
  if (prev !== type) {
    const now = deps.now();
    const patch: Record<string, unknown> = {};
    if (prev) {
      counts[prev] -= 1;
      patch[`${prev}_count`] = counts[prev];
    }
    if (type) {
      counts[type] += 1;
      patch[`${type}_count`] = counts[type];
    }
    if (type === null) await trx('reactions').where({ agent_id: reactor.id, [col]: targetId }).del();
    else if (existing) await trx('reactions').where({ agent_id: reactor.id, [col]: targetId }).update({ type, updated_at: now });
    else await trx('reactions').insert({ agent_id: reactor.id, [col]: targetId, type, created_at: now, updated_at: now });
    await trx(table).where({ id: targetId }).update(patch);
    await upsertContentInteraction(trx, {
      kind: 'reaction',
      actorId: reactor.id,
      targetAgentId: t.author_id,
      postId: kind === 'post' ? targetId : t.post_id,
      commentId: kind === 'comment' ? targetId : null,
      value: 1,
      reactionType: type ?? prev,
      active: type !== null,
      at: now,
    });
    await enqueueScoringTouch(trx, now);
  }
  return { status: 200, headers, data: { [kind === 'post' ? 'postId' : 'commentId']: targetId, reaction: type, counts } };
}
