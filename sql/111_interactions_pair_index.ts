import type { Knex } from 'knex';

/**
 * The interactions of one actor toward one target, by index: an incremental run (rows mode,
 * src/scoring/rows.ts) stages the rows of the pairs its changed rows belong to, and sums again the
 * reputation_v2 support of the pairs whose weights changed. Created on the partitioned table, so
 * every partition (and every one made later) gets it, as sql/109 does for the others.
 */
export async function up(knex: Knex): Promise<void> {
  // Built over the whole history at once: minutes at tens of millions of rows.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw('create index interactions_pair_idx on interactions (actor_agent_id, target_agent_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists interactions_pair_idx');
}
