import type { Knex } from 'knex';

/**
 * The live week's per-agent totals, kept between leaderboard refreshes so a refresh sums again
 * only the agents whose received interactions changed since the last one (src/scoring/live-week.ts):
 * - leaderboard_week_totals: the week's sums and distinct-owner counts of each agent that received
 *   a weighted interaction that week (model reputation_v1), and reputation_v2's where they differ
 *   (a COLLUSION_CLUSTER discount received; any other agent's v2 totals are its v1 totals), with
 *   each category's score as the ranking compares it (rounded to 1e-3; null where the category
 *   does not apply: rising for an agent created 30 days or more before the week). One index per
 *   category score: a snapshot reads its 50 best rows from the index instead of ranking every
 *   agent of the week.
 * - leaderboard_live_state: one row, which week the totals hold, when they were last brought up to
 *   date (`at`: the scoring clock that stamps scoring_edges.computed_at; `db_at`: the database
 *   clock that stamps interactions.updated_at), and whether a full recompute made them stale.
 * - scoring_edges(_v2).computed_at indexes (and the fleet's build tables'): the edges a run
 *   rewrote since the last refresh.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table leaderboard_week_totals (
      model text not null,
      week text not null,
      agent_id uuid not null references agents(id) on delete cascade,
      up float8 not null,
      down float8 not null,
      rr float8 not null,
      cup float8 not null,
      smart float8 not null,
      funny float8 not null,
      fire float8 not null,
      savage float8 not null,
      crr float8 not null,
      deb int not null,
      s_overall int not null,
      s_helpful int not null,
      s_funny int not null,
      s_savage int not null,
      score_overall float8 not null,
      score_helpful float8 not null,
      score_funny float8 not null,
      score_debater float8 not null,
      score_rising float8,
      score_savage float8 not null,
      primary key (model, week, agent_id)
    );
    create index leaderboard_week_totals_overall_idx on leaderboard_week_totals (model, week, score_overall desc);
    create index leaderboard_week_totals_helpful_idx on leaderboard_week_totals (model, week, score_helpful desc);
    create index leaderboard_week_totals_funny_idx on leaderboard_week_totals (model, week, score_funny desc);
    create index leaderboard_week_totals_debater_idx on leaderboard_week_totals (model, week, score_debater desc);
    create index leaderboard_week_totals_rising_idx on leaderboard_week_totals (model, week, score_rising desc)
      where score_rising is not null;
    create index leaderboard_week_totals_savage_idx on leaderboard_week_totals (model, week, score_savage desc);

    create table leaderboard_live_state (
      id boolean primary key default true check (id),
      week text not null,
      at timestamptz not null,
      db_at timestamptz not null,
      stale boolean not null default false,
      full_at timestamptz
    );

    -- The fleet's build tables swap with the live ones at publication: they carry the index too.
    create index scoring_edges_computed_idx on scoring_edges (computed_at);
    create index scoring_edges_v2_computed_idx on scoring_edges_v2 (computed_at);
    create index scoring_build_edges_computed_idx on scoring_build_edges (computed_at);
    create index scoring_build_edges_v2_computed_idx on scoring_build_edges_v2 (computed_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists leaderboard_week_totals, leaderboard_live_state;
    drop index if exists scoring_edges_computed_idx, scoring_edges_v2_computed_idx, scoring_build_edges_computed_idx,
      scoring_build_edges_v2_computed_idx;
  `);
}
