import type { Knex } from 'knex';

/**
 * Worker liveness: one row per running worker process, keyed by the id graphile-worker writes
 * into `locked_by` (the pool id in 0.17). A row whose last_seen is older than the stale bound
 * marks a dead worker whose job locks the other workers release (src/db/worker-liveness.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table worker_heartbeats (
      worker_id text primary key,
      -- the individual worker ids of the pool, for operators and future lock holders
      worker_ids text[] not null default '{}',
      hostname text not null,
      pid int not null,
      started_at timestamptz not null default now(),
      last_seen timestamptz not null default now()
    );
    create index worker_heartbeats_last_seen_idx on worker_heartbeats (last_seen);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists worker_heartbeats');
}
