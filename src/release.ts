import { boot } from './boot';

/** Procfile release: apply knex and graphile-worker migrations, then exit. */
void boot({ web: false, worker: false, migrate: true }).then(
  async (b) => {
    await b.stop();
    process.exit(0);
  },
  (e) => {
    console.error('migration failed:', e);
    process.exit(1);
  },
);
