import type { Knex } from 'knex';

export interface AddJobOptions {
  runAt?: Date;
  maxAttempts?: number;
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  queueName?: string;
  priority?: number;
}

/**
 * Enqueue a graphile-worker job through the caller's transaction (or connection): a committed
 * write can never lose its job and a rolled-back one never runs it.
 */
export async function addJob(trx: Knex | Knex.Transaction, identifier: string, payload: unknown, opts: AddJobOptions = {}): Promise<void> {
  await trx.raw(
    `select graphile_worker.add_job(?, ?::json, queue_name => ?, run_at => ?, max_attempts => ?, job_key => ?, priority => ?, job_key_mode => coalesce(?, 'replace'))`,
    [
      identifier,
      JSON.stringify(payload ?? {}),
      opts.queueName ?? null,
      opts.runAt ?? null,
      opts.maxAttempts ?? null,
      opts.jobKey ?? null,
      opts.priority ?? null,
      opts.jobKeyMode ?? null,
    ],
  );
}
