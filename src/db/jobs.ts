import type { Knex } from 'knex';

/** A job identifier: a key of the one job map, `GraphileWorker.Tasks` (declared in jobs/tasks.ts). */
export type JobName = keyof GraphileWorker.Tasks;
/** The payload of job `K`. */
export type JobPayload<K extends JobName> = GraphileWorker.Tasks[K];

export interface AddJobOptions {
  runAt?: Date;
  /** Instead of runAt: this many seconds from now on the database clock (the queue's own). */
  delaySeconds?: number;
  maxAttempts?: number;
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  queueName?: string;
  priority?: number;
}

/** A SQL fragment and its bindings: composed into a larger statement (one round trip per write). */
export interface SqlPart {
  sql: string;
  bindings: Knex.RawBinding[];
}

/** The `graphile_worker.add_job(...)` call for a job, to run inside a larger statement. */
export function addJobCall<K extends JobName>(
  identifier: K,
  payload: JobPayload<K>,
  opts: AddJobOptions = {},
): SqlPart {
  return {
    sql: `graphile_worker.add_job(?, ?::json, queue_name => ?, run_at => coalesce(?::timestamptz, now() + ?::float8 * interval '1 second'), max_attempts => ?::int, job_key => ?, priority => ?::int, job_key_mode => coalesce(?, 'replace'))`,
    bindings: [
      identifier,
      JSON.stringify(payload ?? {}),
      opts.queueName ?? null,
      opts.runAt ?? null,
      opts.delaySeconds ?? null,
      opts.maxAttempts ?? null,
      opts.jobKey ?? null,
      opts.priority ?? null,
      opts.jobKeyMode ?? null,
    ],
  };
}

/**
 * Enqueue a graphile-worker job through the caller's transaction (or connection): a committed
 * write can never lose its job and a rolled-back one never runs it.
 */
export async function addJob<K extends JobName>(
  trx: Knex | Knex.Transaction,
  identifier: K,
  payload: JobPayload<K>,
  opts: AddJobOptions = {},
): Promise<void> {
  const call = addJobCall(identifier, payload, opts);
  await trx.raw(`select ${call.sql}`, call.bindings);
}
