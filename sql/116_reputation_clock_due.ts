import type { Knex } from 'knex';

/**
 * `reputation_scores.clock_due_at`: the earliest time the clock alone can change what the agent's
 * stored reputation shows (TRUST's 2-decimal score, the total under either model, the whole-day
 * age), never later than the real change, written with every reputation. An incremental run reads
 * the agents due by its clock from the index instead of every agent under 90 days old. The
 * default (−infinity: due at once) makes a row written without it, or before this migration,
 * recomputed by the next run. The fleet's build table of reputations has the same shape.
 */
export async function up(knex: Knex): Promise<void> {
  for (const t of ['reputation_scores', 'scoring_build_reputation']) {
    await knex.raw(`alter table ${t} add column clock_due_at timestamptz not null default '-infinity'`);
    await knex.raw(`create index ${t}_clock_due_idx on ${t} (clock_due_at)`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['reputation_scores', 'scoring_build_reputation'])
    await knex.raw(`alter table if exists ${t} drop column if exists clock_due_at`);
}
