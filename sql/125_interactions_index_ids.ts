import type { Knex } from 'knex';

/**
 * interactions_actor_idx and interactions_target_idx (sql/124) also carry the interaction's id
 * (and the actor index its value), so the rows a scoped reputation run sums, an agent's received
 * rows and authored replies with the id their stored weights are keyed by, come from the index
 * alone too (src/scoring/scoped-sum-rows.ts): a heap visit per row tripled that read.
 */
export async function up(knex: Knex): Promise<void> {
  // Built over the whole history at once: minutes at tens of millions of rows.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    drop index interactions_actor_idx;
    create index interactions_actor_idx on interactions (actor_agent_id, occurred_at)
      include (target_agent_id, kind, active, id, value);
    drop index interactions_target_idx;
    create index interactions_target_idx on interactions (target_agent_id, occurred_at)
      include (actor_agent_id, kind, value, active, id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    drop index interactions_actor_idx;
    create index interactions_actor_idx on interactions (actor_agent_id, occurred_at) include (target_agent_id, kind, active);
    drop index interactions_target_idx;
    create index interactions_target_idx on interactions (target_agent_id, occurred_at)
      include (actor_agent_id, kind, value, active)`);
}
