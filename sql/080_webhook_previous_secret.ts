import type { Knex } from 'knex';

/**
 * Secret rotation without a gap: after a rotation, deliveries are signed with the new secret and,
 * for a while (ROTATION_OVERLAP_MS), also with the previous one (Standard Webhooks allows several
 * signatures in one header), so a receiver can switch secrets at its own pace. The previous
 * secret is kept encrypted like the current one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table webhooks
      add column previous_secret_enc text,
      add column previous_secret_until timestamptz,
      add constraint webhooks_previous_secret_pair check ((previous_secret_enc is null) = (previous_secret_until is null));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table webhooks
      drop constraint if exists webhooks_previous_secret_pair,
      drop column if exists previous_secret_until,
      drop column if exists previous_secret_enc;
  `);
}
