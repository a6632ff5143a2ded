import type { Knex } from 'knex';
import { rebuildSupport, SUPPORT, windowRows } from '../src/scoring/collusion-support';

/**
 * reputation_v2's support graph kept between runs, so that incremental runs find the collusion
 * clusters a full recompute would, re-peeling only the part of the graph a change can reach:
 * - scoring_support: per ordered agent pair, the summed v1 weight of the window's upvotes, replies,
 *   follows and reactions from a to t (weight > 0, a <> t): what COLLUSION_CLUSTER reads;
 * - scoring_cluster_candidates: the agents that pass the cluster test with every mutual supporter
 *   they have (only they can be cluster members), with the support they receive.
 * Built here from the stored weights; full recomputes rebuild both, incremental runs update them;
 * a fleet run builds them beside (scoring_build_*) and swaps them in when it publishes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table scoring_support (
      a uuid not null,
      t uuid not null,
      weight float8 not null,
      -- by target first: a scoped run reads and rewrites the pairs its targets receive
      primary key (t, a)
    );

    create table scoring_cluster_candidates (
      agent_id uuid primary key,
      received float8 not null
    );

    create table scoring_build_support (like scoring_support including all);
    create table scoring_build_cluster_candidates (like scoring_cluster_candidates including all);
  `);
  // The mutual supporters' counts come with sql/119, which builds them.
  await rebuildSupport(
    knex,
    { rows: windowRows('true'), edges: 'scoring_edges', support: SUPPORT.support, candidates: SUPPORT.candidates },
    new Date(),
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'drop table if exists scoring_build_cluster_candidates, scoring_build_support, scoring_support, scoring_cluster_candidates',
  );
}
