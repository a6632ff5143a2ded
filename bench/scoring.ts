/**
 * Scoring benchmark: what scoring costs as the window grows, with the same activity. Per size, on a
 * synthetic network of that many interactions (bench/gen/network.ts: made in Node from a seeded
 * generator and written by COPY, the same rows on every run), with the service clock under the
 * bench's control:
 *   - full recompute in one transaction (runFull, the CLI's `--now`): a first one (every weight and
 *     reputation, first-time milestone notifications), then the figure: a second one over the
 *     stored results;
 *   - full recompute over the worker fleet (bench/lib/fleet.ts: partitions taken as jobs by 1, then
 *     2 worker processes, published whole);
 *   - the first 15-minute run, which freezes the generated history's ended weeks (a one-off backfill);
 *   - the steady 30-minute cycle: 10,000 new interactions of the generated mix happen over 30
 *     minutes, the clock moves 30 minutes on (a 30-minute slice of the history leaves the 90-day
 *     window), and the periodic reputation job runs; --cycles times, the first one a warm-up, the
 *     median of the others is the figure;
 *   - the 15-minute cycle likewise: 5,000 new interactions, 15 minutes, the leaderboard job;
 *   - incremental after 1,000 new interactions (the debounced job after writes), then one minute on
 *     after 100 (the clock moves between debounced runs: reputations the clock alone changed);
 * then the time ratios between sizes and of each cycle to the full recompute.
 *
 *   npx tsx bench/scoring.ts                         # quick: 50k and 200k interactions
 *   npx tsx bench/scoring.ts 1000000 4000000         # the recorded run (BENCHMARKS.md)
 *   npx tsx bench/scoring.ts 200000 --cycles 3       # fewer cycles (default 4)
 *   npx tsx bench/scoring.ts 1000000 --v1            # adds v1-only full and incremental runs (reputation_v2's cost)
 *   npx tsx bench/scoring.ts 1000000 --skip-fleet    # without the fleet runs
 *   BENCH_VERBOSE=1 npx tsx bench/scoring.ts ...      # what every cycle did, not only the last one
 *
 * Besides the wall clock, each timed run reports its CPU (this process with its pool, and the
 * PostgreSQL backends of the size's database): on a shared machine it moves much less.
 *
 * Each size gets its own fresh database (dropped afterwards) on the machine's PostgreSQL
 * (BENCH_ADMIN_DATABASE_URL); all are generated first, then timed, one size after the other.
 */
import { createQuery } from '../src/db/query';
import knexFactory, { Knex } from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { FullResult, IncrementalResult, runFull, runIncremental, runLeaderboards } from '../src/scoring/service';
import { ScoringPool } from '../src/scoring/pool';
import { Caches } from '../src/caches';
import { generateNetwork, Network } from './gen/network';
import { numberArg } from './lib/args';
import { runFleetFull } from './lib/fleet';
import { procAvailable, readCpu, spent } from './lib/proc-cpu';
import { SCHEDULE } from '../src/scoring/policy';
import type { Deps } from '../src/deps';

const scoringPool = new ScoringPool(Number(process.env.SCORING_POOL_SIZE || 2));
const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const MINUTE = 60_000;
/** --skip-fleet: leave out the fleet runs (bench/fleet-full.ts measures them alone). */
const SKIP_FLEET = process.argv.includes('--skip-fleet');
/** The cycles: new interactions per period, and the job each period runs. */
const CYCLES = {
  reputation: { minutes: 30, interactions: 10_000 },
  leaderboards: { minutes: 15, interactions: 5_000 },
};

interface Sized {
  size: number;
  name: string;
  url: string;
  db: Knex;
  deps: Deps;
  net: Network;
  /** The service clock of this size's runs: it moves with the cycles. */
  clock: { now: Date };
  genMs: number;
}

async function prepare(admin: Knex, size: number, now: Date): Promise<Sized> {
  const name = `svc_bench_${size}_${process.pid}`;
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const db = createDb(u.toString(), 4);
  await migrateAll(db, u.toString());
  const g0 = Date.now();
  const net = await generateNetwork(db, { interactions: size }, now);
  const clock = { now };
  return {
    size,
    name,
    url: u.toString(),
    db,
    deps: {
      db,
      query: createQuery(db),
      now: () => clock.now,
      caches: new Caches('test'),
      scoringPool,
    } as unknown as Deps,
    net,
    clock,
    genMs: Date.now() - g0,
  };
}

const s = (ms: number) => (ms / 1000).toFixed(2);
const parts = (f: FullResult) => {
  const w = f.weights.ms;
  return `facts ${w.facts} ms, weights ${w.compute} ms, write ${w.write} ms, clusters ${w.collusion} ms, reputation ${f.ms - w.facts - w.compute - w.write - w.collusion} ms`;
};
const median = (xs: number[]) => {
  const o = [...xs].sort((a, b) => a - b);
  return o.length % 2 ? o[(o.length - 1) / 2] : (o[o.length / 2 - 1] + o[o.length / 2]) / 2;
};
/**
 * CPU milliseconds a run cost: this process (the piscina pool's threads included) and the
 * PostgreSQL backends of the size's database. Other work on a shared machine stretches the wall
 * clock of a run far more than its CPU, so the sizes are compared by both. A backend's title
 * names its cluster only where `cluster_name` is set (Debian's clusters do; a plain initdb's not).
 */
async function withCpu<T>(n: Sized, fn: () => Promise<T>): Promise<{ r: T; cpu: number }> {
  const classify = (pid: number, cmd: string) =>
    pid === process.pid ? 'bench' : new RegExp(`^postgres: (?:[^:]+: )?\\S+ ${n.name} `).test(cmd) ? 'pg' : null;
  const a = procAvailable ? readCpu(classify) : null;
  const r = await fn();
  if (!a) return { r, cpu: NaN };
  let cpu = 0;
  for (const v of spent(a, readCpu(classify)).byRole.values()) cpu += v.user + v.sys;
  return { r, cpu };
}
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = Date.now();
  await fn();
  return Date.now() - t0;
}

/** What an incremental run did. */
const did = (r: IncrementalResult) =>
  `${r.changed} rows (${r.removed} left the window), ${r.facts} agents' facts changed in effect, ` +
  (r.mode === 'rows' ? `${r.core} core rows (of ${r.targets} agents), ` : `${r.targets} agents rescored, `) +
  `${r.weights?.interactions ?? 0} rows scored, ${r.weights?.rewritten ?? 0} rewritten, ${r.reputations} reputations ` +
  `(${r.clockRows} rows written by the clock stage); ms: ` +
  Object.entries({
    ...r.stages,
    ...Object.fromEntries(Object.entries(r.weights?.ms ?? {}).map(([k, v]) => ['w.' + k, v])),
  })
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') +
  `; reputations summed again ${r.reach.summed} (staged rows' ${r.reach.staged}, rewritten edges' ${r.reach.edges}, ` +
  `clusters changed ${r.reach.clusters}, never scored ${r.reach.unscored})` +
  (r.weights?.collusion.steps
    ? `; reputation_v2's clusters (ms, and sizes: ends of changed pairs, seeds, region): ` +
      Object.entries(r.weights.collusion.steps)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')
    : '');

/**
 * A real schedule's runs are minutes apart, and each one reads the changes of the overlap before
 * the previous run's watermark again (SCHEDULE.watermarkOverlapSeconds, on the database clock).
 * Here the runs follow each other in seconds: the rows written since `written` are dated back by
 * that overlap, except those of the last overlap seconds of the period (by occurred_at, up to
 * `until`), which the next run reads again as it would on a real schedule.
 */
async function age(n: Sized, written: Date, until: Date | null) {
  const overlap = SCHEDULE.watermarkOverlapSeconds;
  await n.db.raw(
    `update interactions set updated_at = updated_at - make_interval(secs => ?)
     where updated_at >= ? and (?::timestamptz is null or occurred_at <= ?::timestamptz - make_interval(secs => ?))`,
    [overlap + 1, written, until, until, overlap],
  );
}

async function dbNow(db: Knex): Promise<Date> {
  return new Date((await db.raw('select clock_timestamp() t')).rows[0].t);
}

/**
 * `count` periods of `minutes`: `interactions` new ones happen during the period, the clock moves
 * to its end, `job` runs. Returns each run's time and what the last one did.
 */
async function cycles(
  n: Sized,
  count: number,
  c: { minutes: number; interactions: number },
  job: () => Promise<IncrementalResult>,
) {
  const times: number[] = [];
  const cpus: number[] = [];
  let last = '';
  for (let i = 0; i < count; i++) {
    const from = n.clock.now;
    const to = new Date(from.getTime() + c.minutes * MINUTE);
    const written = await dbNow(n.db);
    await n.net.addActivity(n.db, c.interactions, from, to);
    n.clock.now = to;
    const t0 = Date.now();
    const { r, cpu } = await withCpu(n, job);
    last = did(r);
    if (process.env.BENCH_VERBOSE)
      console.log(`  cycle ${i}: ${Date.now() - t0} ms, CPU ${cpu.toFixed(0)} ms: ${last}`);
    times.push(Date.now() - t0);
    cpus.push(cpu);
    await age(n, written, to);
  }
  return { times, cpus, last };
}

/** Bytes on disk (tables with their indexes, partitions included) of the interactions, of scoring's own tables, of the database. */
async function onDisk(db: Knex) {
  const r = await db.raw(
    `select coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree('interactions'::regclass)),
                     pg_total_relation_size('interactions'))::float8 interactions,
            (select sum(pg_total_relation_size(oid)) from pg_class where relkind = 'r' and relname like 'scoring\\_%')::float8 scoring,
            pg_database_size(current_database())::float8 total`,
  );
  return r.rows[0] as { interactions: number; scoring: number; total: number };
}

interface Timed {
  first: FullResult;
  full: FullResult;
  /** CPU ms (this process and the database's backends) of the second full run, the cycles after their warm-up, the incremental run */
  cpu: { full: number; rep: number[]; lb: number[]; inc: number };
  v1: FullResult | null;
  /** the fleet's full recompute with 1 and 2 worker processes */
  fleet: { one: number; two: number };
  lbFirst: number;
  rep: number[];
  lb: number[];
  inc: number;
}

async function main() {
  const withV1 = process.argv.includes('--v1');
  const count = numberArg('cycles', 4);
  const sizes = process.argv
    .slice(2)
    .filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--cycles')
    .map(Number);
  if (sizes.length === 0) sizes.push(50_000, 200_000);
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  const now = new Date();
  const nets: Sized[] = [];
  const out: Timed[] = [];
  try {
    for (const size of sizes) {
      const n = await prepare(admin, size, now);
      nets.push(n);
      console.log(
        `size ${size}: ${n.net.interactions} interactions, ${n.net.agents} agents, seeded by COPY in ${s(n.genMs)} s`,
      );
    }
    for (const n of nets) {
      const first = await runFull(n.deps);
      console.log(
        `size ${n.size}: first full recompute ${s(first.ms)} s (${parts(first)}), ${first.milestones} milestones`,
      );
      const { r: full, cpu: fullCpu } = await withCpu(n, () => runFull(n.deps));
      console.log(
        `size ${n.size}: full recompute in one transaction ${s(full.ms)} s (${parts(full)}; CPU ${s(fullCpu)} s)`,
      );
      const v1 = withV1 ? await runFull(n.deps, { v1Only: true }) : null;
      if (v1) console.log(`size ${n.size}: same, v1 only ${s(v1.ms)} s (${parts(v1)})`);
      const fleet = { one: 0, two: 0 };
      for (const workers of SKIP_FLEET ? [] : ([1, 2] as const)) {
        const { ms, progress } = await runFleetFull(n.deps, { url: n.url, workers });
        fleet[workers === 1 ? 'one' : 'two'] = ms;
        console.log(
          `size ${n.size}: full recompute over the fleet, ${workers} worker process${workers > 1 ? 'es' : ''}: ${s(ms)} s (${progress.total} partitions)`,
        );
      }
      const lbFirst = await timed(() => runLeaderboards(n.deps));
      console.log(`size ${n.size}: first 15-minute run ${s(lbFirst)} s (freezes the history's ended weeks)`);
      // The periodic reputation job (jobs/reputation_recompute.ts without a payload) is the incremental run.
      const rep = await cycles(n, count, CYCLES.reputation, () => runIncremental(n.deps));
      console.log(
        `size ${n.size}: 30-minute cycles ${rep.times.map(s).join(', ')} s, CPU ${rep.cpus.map(s).join(', ')} s (last: ${rep.last})`,
      );
      const lb = await cycles(n, count, CYCLES.leaderboards, async () => (await runLeaderboards(n.deps)).incremental);
      console.log(
        `size ${n.size}: 15-minute cycles ${lb.times.map(s).join(', ')} s, CPU ${lb.cpus.map(s).join(', ')} s (last: ${lb.last})`,
      );
      // Incremental after 1,000 new interactions only: nothing of the cycles before is read again.
      await age(n, now, null);
      await n.net.addActivity(n.db, 1000, new Date(n.clock.now.getTime() - MINUTE), n.clock.now);
      const { r: inc, cpu: incCpu } = await withCpu(n, () => runIncremental(n.deps));
      console.log(
        `size ${n.size}: incremental after 1,000 new: ${inc.ms} ms, CPU ${incCpu} ms (${did(inc)}; reputation_v2's clusters ` +
          `${inc.weights?.ms.collusion ?? 0} ms, ${inc.weights?.collusion.peeled ?? 0} agents peeled again)`,
      );
      // The debounced run's clock moves too: 100 new interactions over one minute, the clock one minute on.
      await age(n, now, null);
      await n.net.addActivity(n.db, 100, n.clock.now, new Date(n.clock.now.getTime() + MINUTE));
      n.clock.now = new Date(n.clock.now.getTime() + MINUTE);
      const { r: minute, cpu: minuteCpu } = await withCpu(n, () => runIncremental(n.deps));
      console.log(
        `size ${n.size}: incremental one minute on, 100 new: ${minute.ms} ms, CPU ${minuteCpu} ms (${did(minute)})`,
      );
      if (withV1) {
        // As many new interactions again, scored by v1 alone: reputation_v2's share by difference.
        await age(n, now, null);
        await n.net.addActivity(n.db, 1000, new Date(n.clock.now.getTime() - MINUTE), n.clock.now);
        console.log(`size ${n.size}: same, v1 only ${(await runIncremental(n.deps, { v1Only: true })).ms} ms`);
      }
      const disk = await onDisk(n.db);
      const mb = (b: number) =>
        `${(b / 2 ** 20).toFixed(0)} MB (${(b / n.net.interactions).toFixed(0)} B per interaction)`;
      console.log(
        `size ${n.size}: on disk: interactions ${mb(disk.interactions)}, scoring's tables ${mb(disk.scoring)}, database ${mb(disk.total)}`,
      );
      const cpu = { full: fullCpu, rep: rep.cpus.slice(1), lb: lb.cpus.slice(1), inc: incCpu };
      out.push({ first, full, cpu, v1, fleet, lbFirst, rep: rep.times.slice(1), lb: lb.times.slice(1), inc: inc.ms });
    }
    console.log(
      `\n| interactions | agents | seed (s) | full, one transaction (s) | fleet, 1 / 2 workers (s) | 2 / 1 | 30-min cycle (s) | 15-min cycle (s) | incremental after 1,000 (ms) | 30-min cycle / full | µs per interaction: full / 30-min cycle | CPU (s): full / 30-min cycle | 30-min cycle / full, by CPU |`,
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const us = (ms: number, n: Sized) => ((ms * 1000) / n.net.interactions).toFixed(1);
    for (const [i, n] of nets.entries()) {
      const o = out[i];
      const rep = median(o.rep);
      console.log(
        `| ${n.net.interactions} | ${n.net.agents} | ${s(n.genMs)} | ${s(o.full.ms)} | ${SKIP_FLEET ? '- | -' : `${s(o.fleet.one)} / ${s(o.fleet.two)} | ${(o.fleet.two / o.fleet.one).toFixed(2)}`} | ` +
          `${s(rep)} | ${s(median(o.lb))} | ${o.inc} | ${((100 * rep) / o.full.ms).toFixed(1)} % | ${us(o.full.ms, n)} / ${us(rep, n)} | ` +
          `${s(o.cpu.full)} / ${s(median(o.cpu.rep))} | ${((100 * median(o.cpu.rep)) / o.cpu.full).toFixed(1)} % |`,
      );
    }
    console.log(`(cycles: median of ${count - 1} after a warm-up; first full recompute and first 15-minute run above)`);
    for (let i = 1; i < nets.length; i++) {
      const [a, b] = [out[i - 1], out[i]];
      const d = nets[i].net.interactions / nets[i - 1].net.interactions;
      const x = (p: number, q: number) => `×${(q / p).toFixed(2)}`;
      console.log(
        `ratios ${nets[i - 1].size} -> ${nets[i].size}: data ×${d.toFixed(2)}; full ${x(a.full.ms, b.full.ms)}, ` +
          `fleet 1 worker ${x(a.fleet.one, b.fleet.one)}, 2 workers ${x(a.fleet.two, b.fleet.two)}, 30-min cycle ${x(median(a.rep), median(b.rep))}, ` +
          `15-min cycle ${x(median(a.lb), median(b.lb))}, incremental ${x(a.inc, b.inc)}; by CPU: full ${x(a.cpu.full, b.cpu.full)}, ` +
          `30-min cycle ${x(median(a.cpu.rep), median(b.cpu.rep))}, 15-min cycle ${x(median(a.cpu.lb), median(b.cpu.lb))}, incremental ${x(a.cpu.inc, b.cpu.inc)}`,
      );
    }
  } finally {
    for (const n of nets) await n.db.destroy();
    for (const n of nets) await admin.raw(`drop database if exists "${n.name}" with (force)`);
    await admin.destroy();
    await scoringPool.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
