import type { Knex } from 'knex';

/**
 * scoring_reputation_inputs: the interaction-made inputs of each agent's reputation under both
 * models (column suffix 1: reputation_v1, 2: reputation_v2), as the last incremental run that
 * summed them left them: weighted upvotes, downvotes, replies received and authored and followers
 * in integer millionths of a weight (weights are stored to 1e-6, so these sums are exact and can
 * be kept by difference), distinct other owners with a weighted upvote and in weighted
 * conversations. Incremental runs add what their rewritten weights changed instead of summing an
 * agent's every row again (src/scoring/reputation-deltas.ts); an agent without a row is summed
 * from its rows. A full recompute writes every agent's; a fleet run's publication empties it.
 *
 * scoring_edges.value (and its fleet twin's): the vote's value the weight was computed for (a vote
 * changes its value in place): what an edge counted for until it is rewritten. Null on edges
 * written before this migration, whose agents are summed from their rows instead.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table if not exists scoring_reputation_inputs (
      agent_id uuid primary key references agents (id) on delete cascade,
      up1 int8 not null, down1 int8 not null, rr1 int8 not null, ra1 int8 not null, fol1 int8 not null,
      ext1 int4 not null, conv1 int4 not null,
      up2 int8 not null, down2 int8 not null, rr2 int8 not null, ra2 int8 not null, fol2 int8 not null,
      ext2 int4 not null, conv2 int4 not null
    );
    alter table scoring_edges add column if not exists value int2;
    alter table scoring_build_edges add column if not exists value int2`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists scoring_reputation_inputs;
    alter table scoring_edges drop column if exists value;
    alter table scoring_build_edges drop column if exists value`);
}
