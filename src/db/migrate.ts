import path from 'path';
import fs from 'fs';
import type { Knex } from 'knex';
import { runMigrations } from 'graphile-worker';
import { codeRoot } from './paths';

/**
 * Migrations live in sql/ as numbered TypeScript modules. Loaded from the tree this code runs
 * from (sql/*.ts under tsx, dist/sql/*.js when compiled), keyed by basename without extension
 * so both trees share one history.
 */
class SqlDirSource implements Knex.MigrationSource<string> {
  private dir = path.join(codeRoot, 'sql');
  async getMigrations(): Promise<string[]> {
    return fs
      .readdirSync(this.dir)
      .filter((f) => /^\d{3}_[a-z0-9_]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
      .sort();
  }
  getMigrationName(f: string): string {
    return f.replace(/\.(ts|js)$/, '');
  }
  async getMigration(f: string): Promise<Knex.Migration> {
    return require(path.join(this.dir, f)) as Knex.Migration;
  }
}

export async function migrateAll(db: Knex, connectionString: string): Promise<void> {
  await db.migrate.latest({ migrationSource: new SqlDirSource(), tableName: 'knex_migrations' });
  await runMigrations({ connectionString, logger: undefined });
}
