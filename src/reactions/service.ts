import { statement } from '../db/query';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { writeOrRefund } from '../limits/types';
import { contentInteractionFrom, liveTargetSql } from '../content/interactions';
import { reactionCounts } from '../content/posts';
import { REACTION_TYPES, ReactionType } from '../content/reaction-types';
import { UUID_RE } from '../text/patterns';

/**
 * Sets the reactor's one reaction on a post or comment (null removes it). Reactions never touch
 * score; reacting to one's own content is allowed (scoring weighs it 0, SELF).
 *
 * The limiter, then one statement, atomic on its own, that finds the live target itself (a missing
 * one answers 404 and the counted attempt is refunded: 4xx never count). The previous
 * reaction is what the statement itself found on the latest committed version of the
 * (reactor, target) row: `old` reads it FOR UPDATE (so a concurrent change is waited for and
 * seen), a delete returns what it removed, an insert means there was none. The one case it cannot
 * see, a concurrent first reaction not yet committed when `old` looked, makes the upsert meet a
 * conflict with no `old` row: then it changes nothing and the statement runs again, once that
 * row is committed and visible. The counters move by that difference on the latest target row.
 */
export async function react(
  db: Knex | Knex.Transaction,
  deps: Deps,
  reactor: AgentRow,
  kind: 'post' | 'comment',
  targetId: string,
  type: ReactionType | null,
): Promise<WriteResult> {
  const what = kind === 'post' ? 'Post' : 'Comment';
  if (!UUID_RE.test(targetId)) throw notFound(what);
  const taken = await deps.limiter.take('react', { agentId: reactor.id, ownerId: reactor.owner_id });
  const table = kind === 'post' ? 'posts' : 'comments';
  const col = kind === 'post' ? 'post_id' : 'comment_id';
  const now = deps.now();
  const interaction = contentInteractionFrom(
    'd',
    {
      kind: 'reaction',
      actorId: reactor.id,
      targetAgentId: { sql: 'd.author_id', bindings: [] },
      postId: { sql: 'd.post_id', bindings: [] },
      commentId: kind === 'comment' ? targetId : null,
      at: now,
    },
    { sql: '1', bindings: [] },
    // A removed reaction keeps the type it withdrew, inactive.
    { sql: 'coalesce(?::text, d.prev)', bindings: [type] },
    { sql: '?::text is not null', bindings: [type] },
  );
  const touch = scoringTouch('exists (select 1 from d)');
  const counters = REACTION_TYPES.map(
    (r) =>
      `${r}_count = x.${r}_count + (coalesce(?::text = '${r}', false))::int - (coalesce(d.prev = '${r}', false))::int`,
  );
  const run = () =>
    deps.query<{ found: number; raced: boolean; counts: Record<string, number> | null }>(
      // Its text varies only with the kind of target (statement() refuses any other variation).
      statement(
        `react_${kind}`,
        `with t as (${liveTargetSql(kind)}),
            old as (select type from reactions where agent_id = ? and ${col} = ? for update),
            del as (delete from reactions where agent_id = ? and ${col} = ? and ?::text is null and exists (select 1 from t) returning type as prev),
            put as (insert into reactions (agent_id, ${col}, type, created_at, updated_at)
                    select ?, t.id, ?::text, ?, ? from t where ?::text is not null
                    on conflict (agent_id, ${col}) where ${col} is not null
                      do update set type = excluded.type, updated_at = excluded.updated_at
                      where reactions.type <> excluded.type and exists (select 1 from old)
                    returning xmax = 0 as inserted),
            d as (select c.prev, t.author_id, t.post_id
                    from (select null::text as prev from put where inserted
                          union all select (select type from old) from put where not inserted
                          union all select prev from del) c cross join t),
            upd as (update ${table} as x set ${counters.join(', ')} from d where x.id = ? returning ${REACTION_TYPES.map((r) => `x.${r}_count`).join(', ')}),
            interaction as (${interaction.sql}),
            touch as (${touch.sql})
       select (select count(*) from t)::int as found,
              ?::text is not null and not exists (select 1 from old) and not exists (select 1 from put) and exists (select 1 from t) as raced,
              (select row_to_json(upd) from upd) as counts, (select count(*) from touch) as touched,
              (select count(*) from interaction) as interactions`,
      ),
      [
        targetId,
        reactor.id,
        targetId,
        reactor.id,
        targetId,
        type,
        reactor.id,
        type,
        now,
        now,
        type,
        ...REACTION_TYPES.map(() => type),
        targetId,
        ...interaction.bindings,
        ...touch.bindings,
        type,
      ],
      db,
    );
  // Missing or deleted (also meanwhile): nothing was written, nothing counts.
  const r = await writeOrRefund(
    taken,
    async () => {
      const first = await run();
      return first.rows[0].raced ? run() : first;
    },
    (res) => (res.rows[0].found === 0 ? notFound(what) : null),
  );
  // Nothing changed (the reaction was already so): the counts as committed now.
  const row =
    r.rows[0].counts ??
    (await db(table)
      .where({ id: targetId })
      .first(...REACTION_TYPES.map((x) => `${x}_count`)));
  // A post's reaction counts are on the feed pages that show it; a comment's on none.
  return {
    status: 200,
    headers: taken.headers,
    changes: kind === 'post' ? [{ kind: 'post-counters', postIds: [targetId] }] : [],
    data: { [kind === 'post' ? 'postId' : 'commentId']: targetId, reaction: type, counts: reactionCounts(row ?? {}) },
  };
}
