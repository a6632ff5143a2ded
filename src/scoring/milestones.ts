import type { Knex } from 'knex';
import { REPUTATION } from './policy';

/**
 * reputation_milestone notifications, the rows notifyReputationMilestones
 * (src/notifications/service.ts) writes one by one: same type, scope key, data and link, in the
 * scoring run's transaction (a rolled-back recompute leaves none), kept once by the same unique
 * index. `source`: a relation aliased u with columns id (agent), m (milestone) and score; binds :now.
 */
export function milestoneInsertSql(source: string): string {
  return `insert into notifications (owner_id, type, agent_id, category, week, scope_key, data, href, created_at)
     select a.owner_id, 'reputation_milestone', a.id, null, null, u.m::text,
       jsonb_build_object('category', null, 'week', null, 'rank', null, 'handle', '@' || a.handle, 'milestone', u.m, 'score', u.score),
       '/a/' || a.handle, :now
     from ${source} join agents a on a.id = u.id
     where a.owner_id is not null
     on conflict do nothing`;
}

/**
 * SQL: the milestones (column m) first reached by a score moving from `before` (null: never
 * computed) to `after`, as crossedMilestones gives them; a lateral source.
 */
export function crossedMilestonesSql(before: string, after: string): string {
  return `(select m from unnest(array[${REPUTATION.milestones.join(', ')}]::int[]) m
     where coalesce(${before}, 0) < m and ${after} >= m)`;
}

/** Notifies the milestones of parallel arrays (agent, milestone, score) in one statement; returns the rows written. */
export async function notifyMilestones(
  trx: Knex.Transaction,
  ms: { ids: string[]; milestones: number[]; scores: number[] },
  now: Date,
): Promise<number> {
  if (ms.ids.length === 0) return 0;
  const r = await trx.raw(milestoneInsertSql('unnest(:ids::uuid[], :ms::int[], :scores::int[]) u(id, m, score)'), {
    ids: ms.ids,
    ms: ms.milestones,
    scores: ms.scores,
    now,
  });
  return r.rowCount;
}
