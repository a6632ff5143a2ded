import type { Knex } from 'knex';

/**
 * Each agent's reputation sums, kept up to date by the changes of incremental runs instead of
 * summed again from its history (src/scoring/reputation-store.ts):
 * - reputation_sums: per agent, under each model (suffix 1: reputation_v1, 2: reputation_v2), the
 *   weighted upvotes, downvotes, replies received and authored and followers, as exact integers
 *   of 2^-43 (every stored weight is a multiple of it), and the distinct other owners upvoting it
 *   and in its weighted conversations; `own` is the owner (or the agent) its counterparts' tallies
 *   were counted with, so an owner change is seen;
 * - reputation_owner_tallies: per agent, kind (0: external upvoters, 1: conversation
 *   counterparts) and other owner, the qualifying rows under each model: a distinct-owner count
 *   moves when a tally crosses 0;
 * - reputation_vote_values: the value counted for each vote whose value is not 1, so a vote
 *   flipped in place is taken out as it was counted.
 * The fleet builds the same tables beside them. The window clock is cleared: the next run is a
 * full recompute, which writes them whole.
 */
export async function up(knex: Knex): Promise<void> {
  const sums = ['up', 'down', 'rr', 'ra', 'fol'].flatMap((s) => [`${s}1`, `${s}2`]);
  await knex.raw(`
    create table reputation_sums (
      agent_id uuid primary key,
      own uuid not null,
      ${sums.map((s) => `${s} numeric not null default 0`).join(',\n      ')},
      ext1 int not null default 0, ext2 int not null default 0,
      conv1 int not null default 0, conv2 int not null default 0
    );
    create table reputation_owner_tallies (
      agent_id uuid not null,
      kind int2 not null,
      own uuid not null,
      n1 int not null,
      n2 int not null,
      primary key (agent_id, kind, own)
    );
    create table reputation_vote_values (interaction_id bigint primary key, value int2 not null);
    create table scoring_build_reputation_sums (like reputation_sums including all);
    create table scoring_build_owner_tallies (like reputation_owner_tallies including all);
    create table scoring_build_vote_values (like reputation_vote_values including all);
    delete from scoring_watermarks where name = 'scoring_window';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists reputation_sums, reputation_owner_tallies, reputation_vote_values,
    scoring_build_reputation_sums, scoring_build_owner_tallies, scoring_build_vote_values`);
}
