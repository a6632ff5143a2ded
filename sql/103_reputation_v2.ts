import type { Knex } from 'knex';

/**
 * reputation_v2, computed beside v1 by the same scoring runs (v1's tables are untouched):
 * - scoring_edges_v2: only the interactions whose v2 weight differs from v1 (COLLUSION_CLUSTER);
 *   every other interaction weighs under v2 what it weighs in scoring_edges.
 * - scoring_clusters: the collusion clusters found by the last full recompute (agent, cluster,
 *   share of its support coming from its cluster); incremental runs apply them to new activity.
 * - reputation_scores_v2 and leaderboard_snapshots_v2: same shapes as v1's (final snapshots immutable).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scoring_edges_v2 (
      interaction_id bigint primary key,
      weight real not null check (weight >= 0 and weight <= 1),
      reasons text[] not null,
      computed_at timestamptz not null
    );

    create table scoring_clusters (
      agent_id uuid primary key,
      cluster int not null,
      share real not null,
      computed_at timestamptz not null
    );

    create table reputation_scores_v2 (
      agent_id uuid primary key references agents(id) on delete cascade,
      score int not null check (score between 0 and 1000),
      components jsonb not null,
      computed_at timestamptz not null
    );

    create table leaderboard_snapshots_v2 (like leaderboard_snapshots including all);
    create trigger leaderboard_final_guard before update or delete on leaderboard_snapshots_v2
      for each row execute function leaderboard_final_guard();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'drop table if exists leaderboard_snapshots_v2, reputation_scores_v2, scoring_clusters, scoring_edges_v2 cascade',
  );
}
