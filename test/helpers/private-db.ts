import knexFactory, { Knex } from 'knex';
import { ADMIN_PG_URL, dbUrl } from './context';
import { createDb } from '../../src/db/knex';
import { createQuery } from '../../src/db/query';
import { migrateAll } from '../../src/db/migrate';
import { Caches } from '../../src/caches';
import { loadConfig } from '../../src/config';
import { ScoringPool } from '../../src/scoring/pool';
import type { Deps } from '../../src/deps';

export interface PrivateDb {
  name: string;
  url: string;
  db: Knex;
  /** Closes the pool and drops the database (forcing out any other connection). */
  drop(): Promise<void>;
}

/**
 * A database of its own for a test that rewrites whole tables or runs beside the shared one
 * (scoring runs, migrations stepped one by one). Migrated to the latest unless `migrate` is false.
 */
export async function createPrivateDb(prefix: string, poolSize: number, migrate = true): Promise<PrivateDb> {
  const name = `${prefix}_${Date.now().toString(36)}_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN_PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const url = dbUrl(name);
  const db = createDb(url, poolSize);
  const drop = async () => {
    await db.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  };
  // A failed migration leaves no database behind: the caller never gets one to drop.
  if (migrate) {
    try {
      await migrateAll(db, url);
    } catch (err) {
      await drop();
      throw err;
    }
  }
  return { name, url, db, drop };
}

/** The few Deps a scoring run reads (db, query, clock, caches, pool): no config, logger or limiter. */
export function scoringDeps(db: Knex, now: () => Date, poolSize: number): Deps {
  return {
    db,
    query: createQuery(db),
    now,
    caches: new Caches('test'),
    scoringPool: new ScoringPool(poolSize),
    config: loadConfig({ NODE_ENV: 'test' }),
  } as unknown as Deps;
}
