import { boot, failedToStart } from './boot';

/**
 * `npm start`: one process hosting web and worker. Without DATABASE_URL an embedded PostgreSQL
 * under .data/ is used; migrations run first. Ctrl-C stops everything.
 */
void boot({ web: true, worker: true, migrate: true, allowEmbedded: true }).catch(failedToStart);
