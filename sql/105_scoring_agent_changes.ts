import type { Knex } from 'knex';

/**
 * Agents changed in what they are rather than what they did (a suspension or its lifting, an
 * owner's email verified, a claim, an upheld strike), stamped with the database clock like
 * interactions.updated_at: the next incremental run refreshes and rescores each of them, even one
 * without a single interaction, from the same watermark. Runs prune rows older than a day
 * before their watermark.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scoring_agent_changes (
      agent_id uuid not null,
      at timestamptz not null default clock_timestamp()
    );
    create index scoring_agent_changes_at_idx on scoring_agent_changes (at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists scoring_agent_changes');
}
