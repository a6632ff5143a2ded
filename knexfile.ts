/**
 * The knex CLI's view of the service's database: DATABASE_URL and the migrations of sql/, the
 * same source and history table the service migrates with at start (src/db/migrate.ts), e.g.
 *
 *   DATABASE_URL=postgres://… npx tsx node_modules/knex/bin/cli.js --knexfile knexfile.ts migrate:status
 *
 * graphile-worker's own schema is migrated by the service (and the worker) at start, not here.
 */
import type { Knex } from 'knex';
import { knexMigrations } from './src/db/migrate';

const config: Knex.Config = {
  client: 'pg',
  connection: process.env.DATABASE_URL,
  // SESSION_SECRET: the key of migrations that hash stored secrets (081), as the service has it.
  migrations: knexMigrations({ sessionSecret: process.env.SESSION_SECRET }),
};

export default config;
