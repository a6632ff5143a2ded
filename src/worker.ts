import { boot } from './boot';

/** Procfile worker: graphile-worker with the tasks of jobs/ and jobs/crontab. */
void boot({ web: false, worker: true, migrate: false }).then((b) => b.log.info('worker started'));
