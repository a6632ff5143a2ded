import type { Knex } from 'knex';
import { addJobCall, type JobName, SqlPart } from '../db/jobs';
import { enqueue } from './service';

/** The job a touch queues, also its job key (one queued run for a burst of writes). */
export const TOUCH_JOB = 'scoring_incremental' satisfies JobName;

/** Debounce window of incremental scoring after a write. */
export const TOUCH_DEBOUNCE_MS = 30_000;

/**
 * The scoring touch of a write that creates, changes or removes an interaction, as a SELECT to
 * use as a CTE of the write's own statement (rows: one when a job was (re)added, else none).
 * One debounced job (jobKey) covers a burst of writes; the job recomputes what changed since
 * its last watermark, so the payload needs no agent list.
 *
 * add_job on one shared key locks that job row until the write commits, which would serialise
 * every write of the service. So when a run is already pending (not locked, not due within
 * 2 s, hence certain to start after this transaction commits) the job is only read; otherwise
 * it is (re)added in this transaction. A run that failed (attempts > 0) waits out graphile's
 * backoff, hours once it has failed a few times, or never runs again once its attempts are used
 * up: it does not count as pending, and re-adding it resets it to a fresh run 30 s ahead. `when`: a SQL condition (e.g. "exists (select 1 from d)")
 * limiting the touch to writes that changed something.
 * A SELECT CTE runs only when referenced: the write's main SELECT must count its rows.
 */
export function scoringTouch(when = 'true'): SqlPart {
  // Real time on the database clock, not the service clock: a service clock set in the past
  // (tests, replays) would leave a run due forever and make every write re-add it.
  const call = addJobCall(
    TOUCH_JOB,
    {},
    { jobKey: TOUCH_JOB, jobKeyMode: 'preserve_run_at', delaySeconds: TOUCH_DEBOUNCE_MS / 1000 },
  );
  return {
    sql: `select ${call.sql} as job
           where (${when})
             and not exists (select 1 from graphile_worker.jobs
                              where key = '${TOUCH_JOB}' and locked_at is null and attempts = 0
                                and run_at > now() + interval '2 seconds')`,
    bindings: call.bindings,
  };
}

/** Called in the transaction of a write whose statements did not already include the touch. */
export async function enqueueScoringTouch(trx: Knex | Knex.Transaction): Promise<void> {
  const t = scoringTouch();
  await trx.raw(`with touch as (${t.sql}) select count(*) from touch`, t.bindings);
}

/** Stamps agents for the next incremental run (scoring_agent_changes), which recomputes each of them. */
export async function markAgentsChanged(trx: Knex.Transaction, agentIds: string[]): Promise<void> {
  await trx.raw('insert into scoring_agent_changes (agent_id) select unnest(?::uuid[])', [agentIds]);
}

/**
 * After a change to what the agents are rather than what they did (a suspension or its lifting,
 * the owner's email verified, a claim giving them an owner): those are inputs of the weight of
 * every interaction they made or received (SUSPENDED, SAME_OWNER, influence) and of their own
 * reputation (TRUST, score 0). Marks those rows changed, so the next incremental run (debounced,
 * about 30 s) rescores both sides, and queues each agent's own recompute, which also covers an
 * agent without interactions. In the caller's transaction.
 */
export async function rescoreAgents(trx: Knex.Transaction, agentIds: string[]): Promise<void> {
  if (agentIds.length === 0) return;
  await trx.raw(
    'update interactions set updated_at = clock_timestamp() where actor_agent_id = any(?::uuid[]) or target_agent_id = any(?::uuid[])',
    [agentIds, agentIds],
  );
  await markAgentsChanged(trx, agentIds);
  for (const id of agentIds) await enqueue(trx, 'reputation_recompute', { agentId: id });
  await enqueueScoringTouch(trx);
}
