import type { Knex } from 'knex';

/**
 * Full recomputes spread over the worker fleet (src/scoring/fleet.ts):
 * - scoring_runs: one row per run, its current phase and how many of that phase's partitions are
 *   done (the job completing the last one moves the run on, by a conditional update of this row);
 *   at most one unfinished run at a time.
 * - scoring_run_partitions: one row per partition done (also what makes a retried job a no-op).
 * - scoring_build_*: what the run builds before publishing it, same shapes as the tables they
 *   replace (edges of both models, clusters, reputations of both models) plus the milestones the
 *   new reputations reach. The last phase swaps each with its live table in one transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scoring_runs (
      id bigserial primary key,
      partitions int not null check (partitions > 0),
      phase text not null check (phase in ('facts', 'weights', 'clusters', 'reputations', 'publish', 'done', 'abandoned')),
      phase_parts int not null,
      phase_done int not null default 0,
      -- fleet: the next phase's partitions are queued as jobs; otherwise one process runs them all
      fleet boolean not null,
      scored_at timestamptz not null,
      mark timestamptz not null,
      started_at timestamptz not null default clock_timestamp(),
      progressed_at timestamptz not null default clock_timestamp(),
      finished_at timestamptz
    );
    create unique index scoring_runs_one_active on scoring_runs ((true)) where finished_at is null;

    create table scoring_run_partitions (
      run_id bigint not null references scoring_runs(id) on delete cascade,
      phase text not null,
      part int not null,
      rows int not null default 0,
      done_at timestamptz not null default clock_timestamp(),
      primary key (run_id, phase, part)
    );

    create table scoring_build_edges (like scoring_edges including all);
    create table scoring_build_edges_v2 (like scoring_edges_v2 including all);
    create table scoring_build_clusters (like scoring_clusters including all);
    create table scoring_build_reputation (like reputation_scores including all,
      foreign key (agent_id) references agents(id) on delete cascade);
    create table scoring_build_reputation_v2 (like reputation_scores_v2 including all,
      foreign key (agent_id) references agents(id) on delete cascade);
    create table scoring_build_milestones (agent_id uuid not null, milestone int not null, score int not null);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists scoring_build_milestones, scoring_build_reputation_v2, scoring_build_reputation,
    scoring_build_clusters, scoring_build_edges_v2, scoring_build_edges, scoring_run_partitions, scoring_runs`);
}
