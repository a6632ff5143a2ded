import type { Knex } from 'knex';

/**
 * Each index of a live scoring table and of the fleet's table built to replace it named after its
 * own table (`<table>_<suffix>`). A fleet publication swapped the tables and their primary keys'
 * names but left the other indexes' names behind, so after an odd number of runs the live edges
 * carried `scoring_build_edges_computed_idx`. A run now drops the built edges' indexes by name
 * when it starts and builds them again (src/scoring/fleet.ts), and the swap renames every index:
 * the names must first be straight.
 */
const PAIRS: [string, string][] = [
  ['scoring_edges', 'scoring_build_edges'],
  ['scoring_edges_v2', 'scoring_build_edges_v2'],
  ['scoring_clusters', 'scoring_build_clusters'],
  ['scoring_support', 'scoring_build_support'],
  ['scoring_cluster_candidates', 'scoring_build_cluster_candidates'],
  ['scoring_support_mutual', 'scoring_build_support_mutual'],
  ['reputation_scores', 'scoring_build_reputation'],
  ['reputation_scores_v2', 'scoring_build_reputation_v2'],
];

export async function up(knex: Knex): Promise<void> {
  const renames: { from: string; to: string }[] = [];
  for (const [live, built] of PAIRS)
    for (const [table, other] of [
      [live, built],
      [built, live],
    ]) {
      const r = await knex.raw(
        `select indexname from pg_indexes where schemaname = current_schema() and tablename = ? and left(indexname, ?) = ?`,
        [table, other.length + 1, `${other}_`],
      );
      for (const { indexname } of r.rows as { indexname: string }[])
        renames.push({ from: indexname, to: `${table}_${indexname.slice(other.length + 1)}` });
    }
  // Through temporary names: two crossed indexes take each other's.
  for (const [k, { from }] of renames.entries())
    await knex.raw(`alter index ?? rename to ??`, [from, `svc_rename_${k}`]);
  for (const [k, { to }] of renames.entries()) await knex.raw(`alter index ?? rename to ??`, [`svc_rename_${k}`, to]);
}

export async function down(): Promise<void> {
  // Names only: nothing to undo.
}
