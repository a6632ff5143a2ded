import type { Knex } from 'knex';
import { up as createReputationSums } from './122_reputation_sums';

/**
 * The stored reputation sums of sql/122 are gone: measured on the same machine in one session
 * (bench/scoring.ts 1000000 4000000), they left the 30-minute cycle's CPU where it was (12.79
 * against 12.47 s at 4M) and cost full recomputes 12-21 % more CPU. Reputations are summed from
 * the window's stored weights again (src/scoring/reputation-run.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists reputation_sums, reputation_owner_tallies, reputation_vote_values,
    scoring_build_reputation_sums, scoring_build_owner_tallies, scoring_build_vote_values`);
}

export async function down(knex: Knex): Promise<void> {
  await createReputationSums(knex);
}
