import type { Knex } from 'knex';
import type { Model } from './policy';
import { MODEL_TABLES } from './reputation-run';

/** Past this many agents, reading every row stamped with the run's clock beats looking each agent up. */
const LOOKUP_MAX = 2000;

/**
 * Which agents a clock-only update (recomputeClockReputations) rewrote, for the read caches: it
 * writes only the rows that change, stamped with the run's clock (a row whose due time alone moved
 * keeps its computed_at), and removes the v2 rows that no longer differ from v1's, while some of
 * the agents it is given (those due by the clock) keep their stored reputation. `before` is read ahead of the update, `rewritten` after
 * it and before anything else stamps rows with the same clock.
 */
export async function clockWriteWatch(trx: Knex.Transaction, agents: string[], models: readonly Model[]) {
  const [t1, t2] = [MODEL_TABLES.reputation_v1.scores, MODEL_TABLES.reputation_v2.scores];
  const v2 = models.includes('reputation_v2');
  // Agents with a v2 row (a few: cluster members): a removed one changes their v2 reputation without a stamp.
  const v2Ids = async (): Promise<string[]> =>
    (await trx.raw(`select array(select agent_id from ${t2}) ids`)).rows[0].ids;
  const had2 = v2 && agents.length > 0 ? await v2Ids() : [];
  return {
    /** The agents of `agents` whose stored reputation (either model) the update at `now` wrote or removed. */
    async rewritten(now: Date): Promise<string[]> {
      if (agents.length === 0) return [];
      if (agents.length <= LOOKUP_MAX) {
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
      }
      const r = await trx.raw(
        `select array(select agent_id from ${t1} where computed_at = :now
           ${v2 ? `union select agent_id from ${t2} where computed_at = :now` : ''}) ids`,
        { now },
      );
      const has2 = new Set(v2 ? await v2Ids() : []);
      const changed = new Set<string>([...r.rows[0].ids, ...had2.filter((id) => !has2.has(id))]);
      return agents.filter((id) => changed.has(id));
    },
  };
}
