import path from 'path';
import fs from 'fs';
import type { Knex } from 'knex';
import { codeRoot } from './paths';

/**
 * Migrations live in sql/ as numbered TypeScript modules. Loaded from the tree this code runs
 * from (sql/*.ts under tsx, dist/sql/*.js when compiled), keyed by basename without extension
 * so both trees share one history.
 */
/** What a migration may need beyond the database: the key material of secrets it converts. */
export interface MigrationContext {
  sessionSecret?: string;
}

class SqlDirSource implements Knex.MigrationSource<{ file: string }> {
  private dir = path.join(codeRoot, 'sql');
  constructor(private readonly context: MigrationContext = {}) {}
  // Objects with `file`, the shape the knex CLI prints (migrate:status, migrate:list).
  async getMigrations(): Promise<{ file: string }[]> {
    return fs
      .readdirSync(this.dir)
      .filter((f) => /^\d{3}_[a-z0-9_]+\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
      .sort()
      .map((f) => ({ file: f }));
  }
  getMigrationName(m: { file: string }): string {
    return m.file.replace(/\.(ts|js)$/, '');
  }
  async getMigration(m: { file: string }): Promise<Knex.Migration> {
    const mod = require(path.join(this.dir, m.file)) as {
      up: (knex: Knex, context: MigrationContext) => Promise<void>;
      down?: (knex: Knex, context: MigrationContext) => Promise<void>;
    };
    const down = mod.down;
    // knex passes the connection only; the context is the second argument.
    return { up: (knex) => mod.up(knex, this.context), down: down && ((knex) => down(knex, this.context)) };
  }
}

/** Where knex finds and records the migrations: the service at start, and the knex CLI (knexfile.ts). */
export function knexMigrations(context: MigrationContext = {}): Knex.MigratorConfig {
  return { migrationSource: new SqlDirSource(context), tableName: 'knex_migrations' };
}

/**
 * Migrations of sql/ this database has not run (all of them on an empty one). Read without
 * writing: knex's own list would create its table.
 */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const source = new SqlDirSource();
  const all = (await source.getMigrations()).map((m) => source.getMigrationName(m));
  const table = (await db.raw(`select to_regclass('knex_migrations') is not null as present`)).rows[0]
    .present as boolean;
  const done = new Set<string>(
    table
      ? (await db('knex_migrations').select('name')).map((r: { name: string }) => r.name.replace(/\.(ts|js)$/, ''))
      : [],
  );
  return all.filter((name) => !done.has(name));
}

export async function migrateAll(db: Knex, connectionString: string, context: MigrationContext = {}): Promise<void> {
  await db.migrate.latest(knexMigrations(context));
  // Loaded on use: web and worker processes only check pendingMigrations at start.
  const { runMigrations } = require('graphile-worker') as typeof import('graphile-worker');
  await runMigrations({ connectionString, logger: undefined });
}
