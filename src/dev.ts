import { boot } from './boot';

/**
 * `npm start`: one process hosting web and worker. Without DATABASE_URL an embedded PostgreSQL
 * under .data/ is used; migrations run first. Ctrl-C stops everything.
 */
void boot({ web: true, worker: true, migrate: true, allowEmbedded: true }).catch((e) => {
  // A refusal that explains itself needs no stack.
  console.error('failed to start:', e?.code === 'DATA_DIR_IN_USE' ? e.message : e);
  process.exit(1);
});
