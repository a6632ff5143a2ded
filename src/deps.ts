import type { Knex } from 'knex';
import type { Query } from './db/query';
import type { Config } from './config';
import type { Logger } from './log';
import type { Limiter } from './limits/types';
import type { Caches } from './caches';
import type { ScoringPool } from './scoring/pool';
import type { ReadRouting } from './db/replicas';

/** Everything a request handler or a job may use; built by the composition roots and tests. */
export interface Deps {
  config: Config;
  log: Logger;
  db: Knex;
  /** Runs the named hot statements (src/db/query.ts) on the pool or a transaction. */
  query: Query;
  limiter: Limiter;
  /** The process's read caches; a committed write calls `caches.changed(...)` (src/caches.ts). */
  caches: Caches;
  /** The scoring thread pool (threads start with the first large batch). */
  scoringPool: ScoringPool;
  /**
   * Read replicas (DATABASE_READ_URL) for the routes marked `reads: 'replica'`; absent: every
   * read goes to `db`. The route middleware swaps `db` for a replica per request (src/app.ts).
   */
  reads?: ReadRouting;
  /** Clock seam: tests move time without sleeping. */
  now: () => Date;
}
