import type { Knex } from 'knex';

/**
 * scoring_build_rows: what a fleet run's reputations read (src/scoring/fleet.ts), written by its
 * weights partitions from the rows they staged and the weights they computed: each window row with
 * its v1 weight, the agents' owners and the staging's kind number, under the partition of its
 * target (`own`), and each reply again under its actor's partition when that differs. A
 * reputations partition reads its own list partition instead of the whole window joined with
 * every built edge and twice with every agent; the clusters job sums its support pairs from the
 * `own` rows. A run creates the list partitions it needs (one per partition of the agents);
 * unlogged, since a run's rows last only as long as the run (a restart of the database abandons
 * the run that was writing them). Emptied when a run starts and when it is published.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scoring_build_rows (
      part int2 not null,
      own boolean not null,
      k int2 not null,
      a uuid not null,
      t uuid not null,
      aown uuid not null,
      town uuid not null,
      value int2 not null,
      w real not null
    ) partition by list (part);
    create unlogged table scoring_build_rows_default partition of scoring_build_rows default`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists scoring_build_rows');
}
