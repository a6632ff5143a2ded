import type { Knex } from 'knex';
import { addJob } from '../db/jobs';

/** Debounce window of incremental scoring after a write. */
export const TOUCH_DEBOUNCE_MS = 30_000;

/**
 * Called in the transaction of every write that creates, changes or removes an interaction.
 * One debounced job (jobKey) covers a burst of writes; the job recomputes what changed since
 * its last watermark, so the payload needs no agent list.
 *
 * add_job on one shared key locks that job row until the write commits, which would serialise
 * every write of the service. So when a run is already pending (not locked, not due within
 * 2 s, hence certain to start after this transaction commits) we only read it; otherwise the
 * job is (re)added in this transaction as before.
 */
export async function enqueueScoringTouch(trx: Knex | Knex.Transaction, now = new Date()): Promise<void> {
  const pending = await trx.raw(
    `select 1 from graphile_worker.jobs
      where key = 'scoring_incremental' and locked_at is null and run_at > now() + interval '2 seconds'
      limit 1`,
  );
  if (pending.rows.length > 0) return;
  await addJob(trx, 'scoring_incremental', {}, {
    jobKey: 'scoring_incremental',
    jobKeyMode: 'preserve_run_at',
    runAt: new Date(now.getTime() + TOUCH_DEBOUNCE_MS),
  });
}
