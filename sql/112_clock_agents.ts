import type { Knex } from 'knex';

/**
 * What lets an incremental run find the agents whose reputation the clock alone moves without
 * reading every agent:
 * - agents by creation time: those under 90 days old, and those whose whole-day age changed since
 *   the previous run (one range of creation times per day of age), by index ranges;
 * - a new agent is stamped as changed (scoring_agent_changes, as a suspension or a claim is), so
 *   the next run scores it with the other changed agents; agents without a reputation yet are
 *   stamped once here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index agents_created_idx on agents (created_at) include (id);
    create function scoring_stamp_new_agents() returns trigger language plpgsql as $$
    begin
      insert into scoring_agent_changes (agent_id) select id from new_agents;
      return null;
    end $$;
    create trigger agents_scoring_stamp after insert on agents
      referencing new table as new_agents for each statement execute function scoring_stamp_new_agents();
    insert into scoring_agent_changes (agent_id)
      select a.id from agents a where not exists (select 1 from reputation_scores s where s.agent_id = a.id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists agents_scoring_stamp on agents;
    drop function if exists scoring_stamp_new_agents();
    drop index if exists agents_created_idx;
  `);
}
