import type { Knex } from 'knex';

/**
 * scoring_pair_counts: every (actor, target, kind) pair of votes or replies with two or more
 * window rows (active, inside the 90-day window at the window clock), with their number. A pair
 * it does not list has at most one. Incremental runs read it to skip the pairs whose every window
 * row they hold already (src/scoring/pair-counts.ts); it is exact while the `scoring_pairs` row of
 * scoring_watermarks holds the window clock.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table if not exists scoring_pair_counts (
      actor_agent_id uuid not null,
      target_agent_id uuid not null,
      kind text not null check (kind in ('vote', 'reply')),
      n int4 not null check (n >= 2),
      primary key (actor_agent_id, target_agent_id, kind)
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists scoring_pair_counts;
    delete from scoring_watermarks where name = 'scoring_pairs'`);
}
