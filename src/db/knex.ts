import knexFactory, { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../log';

// bigint counts come back as strings by default; our counts fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));
// numeric (1700) stays a string unless a query casts it; scoring reads float8.

export type Db = Knex;

/**
 * knex's own warnings (a connection that could not be made, say) as one structured line without
 * its stack, at most one per kind every 5 s: an outage would otherwise print a stack per query.
 */
function knexLog(log: Logger): Knex.Config['log'] {
  const last = new Map<string, number>();
  const say = (level: 'warn' | 'error') => (message: unknown) => {
    const text = String(message).split('\n')[0];
    const kind = level + text.slice(0, 30);
    const now = Date.now();
    if (now - (last.get(kind) ?? 0) < 5000) return;
    last.set(kind, now);
    log[level]({ knex: text }, 'database client');
  };
  return { warn: say('warn'), error: say('error'), deprecate: say('warn'), debug: () => undefined };
}

/**
 * A pool. `failFast` (read replicas, which have the primary to fall back on): a connection that
 * cannot be made fails the waiting query at once, within 1 s, instead of retrying for 4 s.
 */
export function createDb(connectionString: string, poolMax = 10, log?: Logger, failFast = false): Db {
  const db = knexFactory({
    ...(log ? { log: knexLog(log) } : {}),
    client: 'pg',
    connection: {
      connectionString,
      connectionTimeoutMillis: failFast ? 1000 : 3000,
      statement_timeout: 30000,
    } as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: poolMax,
      acquireTimeoutMillis: failFast ? 1500 : 4000,
      createTimeoutMillis: failFast ? 1000 : 3000,
      idleTimeoutMillis: 10000,
      propagateCreateError: failFast,
    },
  });
  return db;
}
