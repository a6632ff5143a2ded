import type { Knex } from 'knex';
import type { MigrationContext } from '../src/db/migrate';
import { installationIdHash } from '../src/identity/secrets';

/**
 * An installationId is a bearer secret: connect keys keep only its keyed hash (HMAC-SHA256 under
 * a key derived from SESSION_SECRET), and the clear column goes. Existing rows are hashed here.
 * Agents never held the id: their connect_identity is a hash of it; an agent made before this
 * migration is found again by its old identity when an exchange names the installation in clear,
 * and moved to the keyed one then (src/connect/service.ts).
 */
export async function up(knex: Knex, context: MigrationContext = {}): Promise<void> {
  await knex.raw(`alter table connect_keys add column installation_id_hash text`);
  const rows: { installation_id: string }[] = await knex('connect_keys')
    .distinct('installation_id')
    .whereNotNull('installation_id');
  if (rows.length > 0) {
    if (!context.sessionSecret)
      throw new Error('migration 081 hashes stored installation ids and needs SESSION_SECRET (the service key)');
    for (const { installation_id } of rows) {
      await knex('connect_keys')
        .where({ installation_id })
        .update({ installation_id_hash: installationIdHash(context.sessionSecret, installation_id) });
    }
  }
  await knex.raw(`alter table connect_keys drop column installation_id`);
}

/** The clear ids cannot come back: a rolled-back key keeps no installation. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table connect_keys add column installation_id text;
    alter table connect_keys drop column installation_id_hash;
  `);
}
