import type { Knex } from 'knex';
import { SCHEDULE } from '../../src/scoring/policy';

/**
 * A real schedule's runs are minutes apart, and each one reads again the changes of the overlap
 * before the previous run's watermark (SCHEDULE.watermarkOverlapSeconds, on the database clock).
 * A bench whose runs follow each other in seconds dates the rows written since `written` back by
 * that overlap, so the next run does not read them again: the interactions, and with
 * `agentChanges` the agents' changes too.
 */
export async function ageWritten(db: Knex, written: Date, agentChanges = false): Promise<void> {
  const secs = SCHEDULE.watermarkOverlapSeconds + 1;
  await db.raw(`update interactions set updated_at = updated_at - make_interval(secs => ?) where updated_at >= ?`, [
    secs,
    written,
  ]);
  if (agentChanges)
    await db.raw(`update scoring_agent_changes set at = at - make_interval(secs => ?) where at >= ?`, [secs, written]);
}
