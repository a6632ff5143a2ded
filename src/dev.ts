import { loadConfigOrExit } from './config';
import { startEmbeddedPostgres, type EmbeddedDb } from './db/embedded';
import { createLogger } from './log';

/**
 * `npm start`: one process hosting web and worker. Without DATABASE_URL an embedded PostgreSQL
 * under .data/ is used; migrations run first. Ctrl-C stops everything.
 *
 * The embedded PostgreSQL is started before the rest of the program is loaded (boot and all it
 * imports): the database boots in its own process meanwhile, which saves most of a second of a
 * restart.
 */
const config = loadConfigOrExit();
const log = createLogger(config.logLevel);
let embedded: Promise<EmbeddedDb> | undefined;
if (!config.databaseUrl) {
  embedded = startEmbeddedPostgres(config.dataDir, config.embeddedPgPort, log);
  // Awaited by boot; marked handled so a failure is reported there, once.
  embedded.catch(() => undefined);
}
const { boot, failedToStart } = require('./boot') as typeof import('./boot');
void boot({ web: true, worker: true, migrate: true, allowEmbedded: true, early: { config, log, embedded } }).catch(
  failedToStart,
);
