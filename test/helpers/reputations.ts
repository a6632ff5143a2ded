import type { Knex } from 'knex';
import { atRunClock } from '../../src/reputation/service';
import type { ReputationInputs } from '../../src/scoring/reputation';

/**
 * The stored reputations of one table (reputation_scores or reputation_scores_v2) as a reader
 * sees them: composed at the latest run's clock (atRunClock), by agent id, in id order. Stored
 * rows keep TRUST's score and the whole-day age of the run that last wrote them; what readers get
 * is what runs must agree on.
 */
export async function readerReputations(
  db: Knex | Knex.Transaction,
  table: string,
): Promise<{ id: string; score: number; components: unknown }[]> {
  const r = await db.raw(
    `select r.agent_id id, r.score, r.components, r.computed_at, a.created_at,
       (select watermark from scoring_watermarks where name = 'scoring_window') run_at
     from ${table} r join agents a on a.id = r.agent_id order by r.agent_id`,
  );
  return r.rows.map((x: Parameters<typeof atRunClock>[0] & { id: string }) => {
    const { score, components } = atRunClock(x);
    return { id: x.id, score, components };
  });
}

/** The inputs of an agent without interactions, unverified, unofficial, in good standing: TRUST alone. */
export function idleInputs(agentAgeDays: number): ReputationInputs {
  return {
    upvotesWeighted: 0,
    downvotesWeighted: 0,
    uniqueExternalOwners: 0,
    repliesReceivedWeighted: 0,
    repliesAuthoredWeighted: 0,
    distinctCounterparts: 0,
    followersWeighted: 0,
    verifiedOwnerEmail: false,
    agentAgeDays,
    officialConnector: false,
    suspended: false,
    strikes: 0,
  };
}
