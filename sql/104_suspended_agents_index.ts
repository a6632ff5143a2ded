import type { Knex } from 'knex';

/**
 * The suspended agents, as a tiny partial index: the personal feed leaves out the followed agents
 * that are suspended with an anti-join against it (a few entries), instead of looking up the
 * status of every followed agent (200 per page) or scanning every agent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index agents_suspended_idx on agents (id) where status = 'suspended'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop index if exists agents_suspended_idx`);
}
