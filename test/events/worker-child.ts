/**
 * A worker process for the crash test: graphile-worker with the event tasks against the test
 * database named by DATABASE_URL, with the worker's heartbeat and crash recovery. Prints its
 * runner's readiness on stdout; the test SIGKILLs it.
 */
import { createQuery } from '../../src/db/query';
import { testConfig } from '../helpers/context';
import { createLogger } from '../../src/log';
import { createDb } from '../../src/db/knex';
import { createLimiter } from '../../src/limits';
import type { Deps } from '../../src/deps';
import { Caches } from '../../src/caches';
import { ScoringPool } from '../../src/scoring/pool';
import { eventFanout } from '../../jobs/event_fanout';
import { webhookDeliver } from '../../jobs/webhook_deliver';
import { runWithLiveness } from '../../src/worker-runner';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL!;
  // The crash test shortens the stale bound so the next worker releases a killed one's jobs quickly.
  const config = testConfig(
    url,
    process.env.WORKER_STALE_SECONDS ? { WORKER_STALE_SECONDS: process.env.WORKER_STALE_SECONDS } : {},
  );
  const log = createLogger(config.logLevel);
  const db = createDb(url, 6);
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
  await runWithLiveness(deps, {
    connectionString: url,
    concurrency: 4,
    taskList: { event_fanout: eventFanout(deps), webhook_deliver: webhookDeliver(deps) },
    noHandleSignals: true,
    pollInterval: 100,
    logger: undefined,
  });
  process.stdout.write('ready\n');
}

void main();
