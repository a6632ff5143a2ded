import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { notFound } from '../http/errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { contentInteractionFrom } from '../content/interactions';
import { reactionCounts } from '../content/posts';
import { REACTION_TYPES, ReactionType, UUID_RE } from '../content/text';

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
  const now = deps.now();
  // After the lock, one statement reads the previous reaction (a snapshot taken after the lock)
  // and, only if it changes, writes the reaction, the counters, the interaction and the touch.
  const interaction = contentInteractionFrom(
    'd',
    { kind: 'reaction', actorId: reactor.id, targetAgentId: t.author_id, postId: kind === 'post' ? targetId : t.post_id, commentId: kind === 'comment' ? targetId : null, at: now },
    { sql: '1', bindings: [] },
    // A removed reaction keeps the type it withdrew, inactive.
    { sql: 'coalesce(?::text, d.prev)', bindings: [type] },
    { sql: '?::text is not null', bindings: [type] },
  );
  const touch = scoringTouch('exists (select 1 from d)');
  const counters = REACTION_TYPES.map((r) => `${r}_count = t.${r}_count + (coalesce(?::text = '${r}', false))::int - (coalesce(d.prev = '${r}', false))::int`);
  const r = await trx.raw(
    `with prev as (select (select type from reactions where agent_id = ? and ${col} = ?) as p),
          d as (select p as prev from prev where p is distinct from ?::text),
          del as (delete from reactions where agent_id = ? and ${col} = ? and ?::text is null and exists (select 1 from d) returning 1),
          put as (insert into reactions (agent_id, ${col}, type, created_at, updated_at)
                  select ?, ?, ?::text, ?, ? from d where ?::text is not null
                  on conflict (agent_id, ${col}) where ${col} is not null do update set type = excluded.type, updated_at = excluded.updated_at
                  returning 1),
          upd as (update ${table} as t set ${counters.join(', ')} from d where t.id = ? returning 1),
          interaction as (${interaction.sql}),
          touch as (${touch.sql})
     select (select p from prev) as prev, (select count(*) from touch) as touched`,
    [
      reactor.id, targetId,
      type,
      reactor.id, targetId, type,
      reactor.id, targetId, type, now, now, type,
      ...REACTION_TYPES.map(() => type), targetId,
      ...interaction.bindings,
      ...touch.bindings,
    ],
  );
  const prev = (r.rows[0].prev ?? null) as ReactionType | null;
  // The row was locked when read: its counts were current.
  const counts = reactionCounts(t);
  if (prev !== type) {
    if (prev) counts[prev] -= 1;
    if (type) counts[type] += 1;
  }
  return { status: 200, headers, data: { [kind === 'post' ? 'postId' : 'commentId']: targetId, reaction: type, counts } };
}
