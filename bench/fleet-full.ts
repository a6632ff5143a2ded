/**
 * Full recompute spread over the worker fleet: one worker process against two, on a synthetic
 * network (bench/gen/network.ts) in a fresh database (dropped afterwards). Each round runs the
 * one-transaction full recompute (runFull, today's `--now`), then the fleet run with 1 and with 2
 * worker processes (bench/lib/fleet.ts), in alternating order, each after a CHECKPOINT (else the
 * first one after runFull wrote back its pages); prints each time, the medians and
 * the ratio 2 workers / 1. Per fleet run, each phase's wall time, CPU seconds by process (each
 * worker, the database's PostgreSQL backends, the bench) and cores kept busy (their CPU / wall;
 * on this machine's cores, n workers cannot beat a phase's time × busy / cores), and when each job
 * ran on which worker; per runFull, the same CPU split and its stages.
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
import os from 'os';
import { addCpu, CpuMeter, JobTiming, PhaseStat, runFleetFull } from './lib/fleet';
import type { Deps } from '../src/deps';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const size = Number(process.argv[2] || 1_000_000);
const rounds = Number(process.argv[3] || 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (ms: number) => (ms / 1000).toFixed(2);
const s1 = (ms: number) => (ms / 1000).toFixed(1);
const CORES = os.cpus().length;

/** CPU seconds by process, the cores they kept busy and the machine's (other processes included). */
function cpuLine(wall: number, cpu: Map<string, number>, machineBusy: number): string {
  const roles = [...cpu].filter(([, ms]) => ms > 0).sort(([a], [b]) => a.localeCompare(b));
  const total = roles.reduce((n, [, ms]) => n + ms, 0);
  const by = roles.map(([r, ms]) => `${r} ${s1(ms)}`).join(', ');
  return `CPU s ${by}; cores busy ${(total / Math.max(1, wall)).toFixed(2)} (machine ${(machineBusy * CORES).toFixed(2)})`;
}

/** One line per phase: wall, CPU, and its jobs (worker: phase part start–end, s from the run's start). */
function phaseLines(phases: PhaseStat[], jobs: JobTiming[]): string[] {
  return phases.map((p) => {
    // reputation_v2's clusters job runs in the reputations phase.
    const mine = jobs.filter((j) => j.phase === p.phase || (p.phase === 'reputations' && j.phase === 'clusters'));
    const js = mine.map((j) => `w${j.worker} ${j.phase} ${j.part} ${s1(j.start)}–${s1(j.end)}`).join(', ');
    const wall = p.end - p.start;
    return `    ${p.phase.padEnd(11)} ${s1(p.start)}–${s1(p.end)} (${s1(wall)} s): ${cpuLine(wall, p.cpu, p.machineBusy)}\n      jobs: ${js}`;
  });
}

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
      const meter = new CpuMeter(name, new Map());
      const fullCpu = { cpu: new Map<string, number>(), busy: 0, samples: 0 };
      const sample = () => {
        const { cpu, machineBusy } = meter.sample();
        addCpu(fullCpu.cpu, cpu);
        fullCpu.busy += machineBusy;
        fullCpu.samples++;
      };
      const sampling = setInterval(sample, 200);
      const f = await runFull(deps).finally(() => clearInterval(sampling));
      sample();
      times.inProcess.push(f.ms);
      for (const workers of r % 2 === 0 ? [1, 2] : [2, 1]) {
        // Each run from clean buffers: the dirty pages and WAL of the run before are not its work.
        await db.raw('checkpoint');
        const { ms, phases, jobs } = await runFleetFull(deps, { url, workers });
        (workers === 1 ? times.one : times.two).push(ms);
        console.log(`round ${r + 1}: fleet, ${workers} worker${workers > 1 ? 's' : ''}: ${s(ms)} s`);
        for (const line of phaseLines(phases, jobs)) console.log(line);
      }
      const st = f.weights.ms;
      console.log(
        `round ${r + 1}: runFull in one transaction: ${s(f.ms)} s (weights: facts ${s1(st.facts)}, compute ${s1(st.compute)}, ` +
          `write ${s1(st.write)}, clusters ${s1(st.collusion)}; reputations ${s1(f.ms - st.facts - st.compute - st.write - st.collusion)})\n` +
          `    ${cpuLine(f.ms, fullCpu.cpu, fullCpu.busy / fullCpu.samples)}`,
      );
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
