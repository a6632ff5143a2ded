import type { Knex } from 'knex';
import type { Model } from './policy';
import { MODEL_TABLES } from './reputation-run';

/**
 * Which agents a clock-only update (recomputeClockReputations) rewrote, for the read caches: it
 * writes only the rows that change, stamped with the run's clock, and removes the v2 rows that no
 * longer differ from v1's, while most of the agents it is given (every agent under 90 days old,
 * each run) keep their stored reputation. `before` is read ahead of the update, `rewritten` after.
 */
export async function clockWriteWatch(trx: Knex.Transaction, agents: string[], models: readonly Model[]) {
  const v2 = models.includes('reputation_v2');
  // Agents with a v2 row: a removed one changes their v2 reputation without a stamp.
  const had2: string[] =
    v2 && agents.length > 0
      ? (
          await trx.raw(
            `select array(select agent_id from ${MODEL_TABLES.reputation_v2.scores} where agent_id = any(:agents::uuid[])) ids`,
            { agents },
          )
        ).rows[0].ids
      : [];
  return {
    /** The agents of `agents` whose stored reputation (either model) the update at `now` wrote or removed. */
    async rewritten(now: Date): Promise<string[]> {
      if (agents.length === 0) return [];
      const [t1, t2] = [MODEL_TABLES.reputation_v1.scores, MODEL_TABLES.reputation_v2.scores];
      const r = await trx.raw(
        `select array(
           select id from unnest(:agents::uuid[]) id
           where exists (select 1 from ${t1} r where r.agent_id = id and r.computed_at = :now)
             ${v2 ? `or exists (select 1 from ${t2} r where r.agent_id = id and r.computed_at = :now)` : ''}
             or (id = any(:had2::uuid[]) and not exists (select 1 from ${t2} r where r.agent_id = id))
         ) ids`,
        { agents, now, had2 },
      );
      return r.rows[0].ids;
    },
  };
}
