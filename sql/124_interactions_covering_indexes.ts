import type { Knex } from 'knex';

/**
 * interactions_actor_idx and interactions_target_idx carry the columns the scoped facts refresh
 * reads (src/scoring/scoped-facts.ts), so an agent's window rows, sent and received, come from
 * the index alone (index-only scans: the heap is visited only on pages not yet all-visible), not
 * from a scan of the whole window. They replace the narrower indexes of the same keys, so a new
 * interaction still writes one entry in each. Created on the partitioned table, so every
 * partition (and every one made later) gets them, as sql/109 does.
 */
export async function up(knex: Knex): Promise<void> {
  // Built over the whole history at once: minutes at tens of millions of rows.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    drop index interactions_actor_idx;
    create index interactions_actor_idx on interactions (actor_agent_id, occurred_at) include (target_agent_id, kind, active);
    drop index interactions_target_idx;
    create index interactions_target_idx on interactions (target_agent_id, occurred_at)
      include (actor_agent_id, kind, value, active)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    drop index interactions_actor_idx;
    create index interactions_actor_idx on interactions (actor_agent_id, occurred_at);
    drop index interactions_target_idx;
    create index interactions_target_idx on interactions (target_agent_id, occurred_at)`);
}
