/**
 * One worker process of the scoring fleet for benches: the fleet runner of src/worker-runner.ts
 * (the `scoring_partition` task, one job at a time, no local queue) with the scoring thread pool,
 * on BENCH_DATABASE_URL, without the rest of a worker's services. Prints READY once it takes jobs,
 * then a line `JOB {phase, part, start, end}` (epoch ms) per job it ran; stops on SIGTERM.
 */
import { Logger, run } from 'graphile-worker';
import { createDb } from '../../src/db/knex';
import { createQuery } from '../../src/db/query';
import { Caches } from '../../src/caches';
import { ScoringPool } from '../../src/scoring/pool';
import { graphileRunOptions } from '../../src/worker-runner';
import { buildFleetTaskList } from '../../jobs';
import type { Deps } from '../../src/deps';

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url) throw new Error('BENCH_DATABASE_URL is required');
  const db = createDb(url, 2);
  const scoringPool = new ScoringPool(Number(process.env.SCORING_POOL_SIZE || 2));
  const deps = { db, query: createQuery(db), now: () => new Date(), caches: new Caches('test'), scoringPool };
  const partition = buildFleetTaskList(deps as unknown as Deps).scoring_partition;
  const runner = await run({
    connectionString: url,
    ...graphileRunOptions(1, { localQueueSize: -1 }),
    taskList: {
      // When each job ran in this process, for the bench's timeline (bench/lib/fleet.ts).
      scoring_partition: async (payload, helpers) => {
        const start = Date.now();
        await partition(payload, helpers);
        const { phase, part } = payload as { phase: string; part: number };
        console.log(`JOB ${JSON.stringify({ phase, part, start, end: Date.now() })}`);
      },
    },
    noHandleSignals: true,
    logger: new Logger(() => () => undefined),
  });
  process.once('SIGTERM', () => {
    void runner
      .stop()
      .then(() => scoringPool.destroy())
      .then(() => db.destroy())
      .then(() => process.exit(0));
  });
  console.log('READY');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
