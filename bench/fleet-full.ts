/**
 * Full recompute spread over the worker fleet: one worker process against two, on a synthetic
 * network (bench/gen/network.ts) in a fresh database (dropped afterwards). Each round runs the
 * one-transaction full recompute (runFull, today's `--now`), then the fleet run with 1 and with 2
 * worker processes (bench/lib/fleet.ts), in alternating order; prints each time, the medians and
 * the ratio 2 workers / 1.
 *
 *   npx tsx bench/fleet-full.ts                 # 1M interactions, 3 rounds
 *   npx tsx bench/fleet-full.ts 200000 2        # size, rounds
 */
import knexFactory from 'knex';
import { createDb } from '../src/db/knex';
import { createQuery } from '../src/db/query';
import { migrateAll } from '../src/db/migrate';
import { runFull } from '../src/scoring/service';
import { ScoringPool } from '../src/scoring/pool';
import { Caches } from '../src/caches';
import { generateNetwork } from './gen/network';
import { runFleetFull } from './lib/fleet';
import type { Deps } from '../src/deps';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const size = Number(process.argv[2] || 1_000_000);
const rounds = Number(process.argv[3] || 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (ms: number) => (ms / 1000).toFixed(2);

async function main(): Promise<void> {
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  const name = `svc_bench_fleet_${size}_${process.pid}`;
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const url = u.toString();
  const db = createDb(url, 4);
  const scoringPool = new ScoringPool(Number(process.env.SCORING_POOL_SIZE || 2));
  try {
    await migrateAll(db, url);
    const now = new Date();
    const g0 = Date.now();
    const net = await generateNetwork(db, { interactions: size }, now);
    console.log(`${net.interactions} interactions, ${net.agents} agents generated in ${s(Date.now() - g0)} s`);
    const deps = {
      db,
      query: createQuery(db),
      now: () => now,
      caches: new Caches('test'),
      scoringPool,
    } as unknown as Deps;
    const times: Record<'inProcess' | 'one' | 'two', number[]> = { inProcess: [], one: [], two: [] };
    for (let r = 0; r < rounds; r++) {
      const f = await runFull(deps);
      times.inProcess.push(f.ms);
      for (const workers of r % 2 === 0 ? [1, 2] : [2, 1]) {
        const { ms, progress } = await runFleetFull(deps, { url, workers });
        (workers === 1 ? times.one : times.two).push(ms);
        // When each phase ended, from the run's start: where the time goes, serial steps included.
        const phases = await db.raw(
          `select p.phase, extract(epoch from max(p.done_at) - r.started_at)::float8 t from scoring_run_partitions p
           join scoring_runs r on r.id = p.run_id where p.run_id = ? group by 1, r.started_at order by 2`,
          [progress.id],
        );
        const ends = phases.rows.map((x: { phase: string; t: number }) => `${x.phase} ${x.t.toFixed(1)}`).join(', ');
        console.log(
          `round ${r + 1}: fleet, ${workers} worker${workers > 1 ? 's' : ''}: ${s(ms)} s (phases end at s: ${ends})`,
        );
      }
      console.log(`round ${r + 1}: runFull in one transaction: ${s(f.ms)} s`);
    }
    const [full, one, two] = [median(times.inProcess), median(times.one), median(times.two)];
    console.log(
      `median of ${rounds}: runFull ${s(full)} s; fleet 1 worker ${s(one)} s, 2 workers ${s(two)} s; ` +
        `2 workers / 1 = ${(two / one).toFixed(2)}; 2 workers / runFull = ${(two / full).toFixed(2)}`,
    );
  } finally {
    await scoringPool.destroy();
    await db.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
