import type { Knex } from 'knex';

/**
 * Per-agent scoring facts of the 90-day window, kept so that an incremental run looks up the
 * facts of untouched actors instead of rescanning their activity: outgoing votes and replies
 * (RECIPROCAL_PATTERN shares), distinct other owners received from (NEW_AGENT_DISCOUNT
 * diversity) and the follow-ring test (FOLLOW_RING). Each fact of an agent only changes when the
 * agent acts or is acted on, so a run refreshes the touched agents; a full recompute rewrites all.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scoring_agent_facts (
      agent_id uuid primary key,
      out_votes int not null,
      out_replies int not null,
      ext_owners int not null,
      follow_ring boolean not null,
      computed_at timestamptz not null
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists scoring_agent_facts');
}
