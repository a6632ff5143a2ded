import { boot, failedToStart } from './boot';

/** Procfile web: the API and pages. Migrations run in the release phase. */
void boot({ web: true, worker: false, migrate: false }).catch(failedToStart);
