import { expect } from 'chai';
import pino from 'pino';
import { Writable } from 'stream';
import { createQuery } from '../../src/db/query';
import { migrateAll } from '../../src/db/migrate';
import { createLimiter } from '../../src/limits';
import { Caches } from '../../src/caches';
import { ScoringPool } from '../../src/scoring/pool';
import { startWorker } from '../../src/worker-runner';
import type { Deps } from '../../src/deps';
import { testConfig } from '../helpers/context';
import { createPrivateDb } from '../helpers/private-db';

describe('worker start', function () {
  this.timeout(60_000);

  it('registers the crontab and logs nothing that says cron is off', async () => {
    // Migrated below, with the session secret of the config its URL gives.
    const pdb = await createPrivateDb('svc_worker_start', 5, false);
    const { db, url } = pdb;
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    try {
      const config = testConfig(url, { REDIS_URL: '' });
      await migrateAll(db, url, { sessionSecret: config.sessionSecret });
      const log = pino({ level: 'info' }, sink);
      const deps: Deps = {
        config,
        log,
        db,
        query: createQuery(db),
        limiter: createLimiter(config, log),
        caches: new Caches(config.nodeEnv),
        scoringPool: new ScoringPool(1),
        now: () => new Date(),
      };
      const runner = await startWorker(deps, url);
      try {
        // Cron registers its schedules in known_crontabs once it has started.
        const end = Date.now() + 20_000;
        let known = 0;
        while (Date.now() < end && known === 0) {
          known = (await db.raw('select count(*)::int n from graphile_worker._private_known_crontabs')).rows[0].n;
          if (known === 0) await new Promise((r) => setTimeout(r, 100));
        }
        expect(known, 'crontab entries registered').to.be.greaterThan(0);
      } finally {
        await runner.stop();
        await deps.limiter.close();
      }
      expect(lines.filter((l) => /cron is disabled|Failed to read crontab/.test(l))).to.deep.equal([]);
    } finally {
      await pdb.drop();
    }
  });
});
