import knexFactory, { Knex } from 'knex';
import pg from 'pg';
import { observeWrites } from '../cache/ttl';
import { usePreparedStatements } from './prepared';

// bigint counts come back as strings by default; our counts fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric (1700) stays a string unless a query casts it; scoring reads float8.

export type Db = Knex;

export function createDb(connectionString: string, poolMax = 10): Db {
  const db = knexFactory({
    client: 'pg',
    connection: { connectionString, connectionTimeoutMillis: 3000, statement_timeout: 30000 } as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: poolMax,
      acquireTimeoutMillis: 4000,
      createTimeoutMillis: 3000,
      idleTimeoutMillis: 10000,
      propagateCreateError: false,
    },
  });
  // In-process read caches (src/cache/ttl.ts) follow every write made through this instance.
  observeWrites(db);
  usePreparedStatements(db);
  return db;
}
