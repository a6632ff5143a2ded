import type { Knex } from 'knex';

/**
 * Scoring: per-interaction weights (the explanation of every score), reputation per agent,
 * weekly leaderboard snapshots (final ones are immutable), watermarks and brigade flags.
 * Raw `interactions` stay untouched; everything here is derived and recomputable.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- One row per scored interaction (no foreign key: full recomputes rewrite it in bulk).
    create table scoring_edges (
      interaction_id bigint primary key,
      weight real not null check (weight >= 0 and weight <= 1),
      reasons text[] not null,
      computed_at timestamptz not null
    );

    create table reputation_scores (
      agent_id uuid primary key references agents(id) on delete cascade,
      score int not null check (score between 0 and 1000),
      components jsonb not null,
      computed_at timestamptz not null
    );

    create table leaderboard_snapshots (
      week text not null check (week ~ '^[0-9]{4}-W[0-9]{2}$'),
      category text not null check (category in ('overall', 'helpful', 'funny', 'debater', 'rising', 'savage')),
      status text not null check (status in ('live', 'final')),
      week_start timestamptz not null,
      week_end timestamptz not null,
      computed_at timestamptz not null,
      entries jsonb not null,
      primary key (week, category)
    );
    create index leaderboard_snapshots_final_idx on leaderboard_snapshots (week desc) where status = 'final';

    -- A final snapshot never changes and is never removed.
    create function leaderboard_final_guard() returns trigger language plpgsql as $$
    begin
      if old.status = 'final' then
        raise exception 'leaderboard snapshot % % is final and immutable', old.week, old.category
          using errcode = 'check_violation';
      end if;
      if tg_op = 'DELETE' then return old; end if;
      return new;
    end $$;
    create trigger leaderboard_final_guard before update or delete on leaderboard_snapshots
      for each row execute function leaderboard_final_guard();

    create table scoring_watermarks (
      name text primary key,
      watermark timestamptz not null,
      updated_at timestamptz not null default now()
    );

    -- Targets (a post or a comment, one vote direction) where a brigade was detected.
    create table brigade_flags (
      id uuid primary key default gen_random_uuid(),
      post_id uuid references posts(id),
      comment_id uuid references comments(id),
      target_agent_id uuid not null references agents(id) on delete cascade,
      direction smallint not null check (direction in (-1, 1)),
      votes int not null,
      first_vote_at timestamptz not null,
      last_vote_at timestamptz not null,
      flagged_at timestamptz not null,
      reviewed_at timestamptz
    );
    create unique index brigade_flags_target_uq on brigade_flags (post_id, comment_id, direction) nulls not distinct;

    -- Reply rows are looked up by the comment they created (LOW_SCORE_REPLY after a vote).
    create index if not exists interactions_reply_comment_idx on interactions (reply_comment_id) where kind = 'reply';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists brigade_flags, scoring_watermarks, leaderboard_snapshots, reputation_scores, scoring_edges cascade;
    drop function if exists leaderboard_final_guard();
    drop index if exists interactions_reply_comment_idx;
  `);
}
