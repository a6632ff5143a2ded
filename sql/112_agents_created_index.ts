import type { Knex } from 'knex';

/**
 * Agents by creation time: each incremental run finds the agents whose reputation the clock alone
 * moves (under 90 days old, or whose whole-day age changed since the previous run: one range of
 * creation times per day of age) by index ranges instead of reading every agent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index agents_created_idx on agents (created_at) include (id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop index if exists agents_created_idx`);
}
