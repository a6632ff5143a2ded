import type { Knex } from 'knex';

/**
 * The part of each reputation that only interactions move (QUALITY + ENGAGEMENT + REACH,
 * unrounded), under both models: an incremental run whose clock alone changes an agent's
 * reputation (TRUST's age, strikes entering or leaving the window) recomputes it from these
 * instead of summing the agent's interactions again. Null: not stored yet (summed again). The
 * fleet's build table of reputations has the same shape.
 */
export async function up(knex: Knex): Promise<void> {
  for (const t of ['reputation_scores', 'scoring_build_reputation'])
    await knex.raw(`alter table ${t} add column base float8, add column base_v2 float8`);
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['reputation_scores', 'scoring_build_reputation'])
    await knex.raw(`alter table if exists ${t} drop column if exists base, drop column if exists base_v2`);
}
