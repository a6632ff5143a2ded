import type { Knex } from 'knex';
import type { Config } from './config';
import type { Logger } from './log';
import type { Limiter } from './limits/types';

/** Everything a request handler or a job may use; built by the composition roots and tests. */
export interface Deps {
  config: Config;
  log: Logger;
  db: Knex;
  limiter: Limiter;
  /** Clock seam: tests move time without sleeping. */
  now: () => Date;
}
