/**
 * Scoring benchmark (issue 29, point 5: measure and plan). Per size, on a synthetic network of that
 * many interactions (bench/gen/network.ts, generated inside PostgreSQL, seeded, deterministic):
 *   - full recompute, 1 worker: the first full run (every weight and reputation, first-time
 *     milestone notifications);
 *   - the steady 30-minute cycle: the `reputation_recompute` job, today a full recompute over the
 *     stored results (its cost grows with the window, not with activity);
 *   - full recompute, 2 workers: two worker-like clients (each its own connection pool, as two
 *     processes) start the same full recompute at once; today every run takes one advisory lock in
 *     one transaction, so the second waits and then redoes it: "done" is the first commit, "both"
 *     the second;
 *   - the 15-minute cycle: `leaderboards_refresh` (incremental catch-up + live week snapshots), its
 *     first run (which freezes the generated history's ended weeks, a one-off backfill) and a steady one;
 *   - incremental after 1,000 new votes (the debounced job after writes);
 * then the time ratios between sizes and per-interaction costs.
 *
 *   npx tsx bench/scoring.ts                     # quick: 50k and 100k interactions
 *   npx tsx bench/scoring.ts full                # 1M and 4M (about 20 minutes on 2 cores)
 *   npx tsx bench/scoring.ts 1000000 2000000     # explicit sizes
 *   npx tsx bench/scoring.ts 1000000 --v1        # adds a v1-only full run (reputation_v2's cost, issue 33)
 *
 * Each size gets its own fresh database (dropped afterwards) on the machine's PostgreSQL; all are
 * generated first, then timed, one size after the other.
 */
import { createQuery } from '../src/db/query';
import knexFactory, { Knex } from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { FullResult, IncrementalResult, runFull, runIncremental, runLeaderboards } from '../src/scoring/service';
import { ScoringPool } from '../src/scoring/pool';
import { Caches } from '../src/caches';
import { generateNetwork, addFreshVotes } from './gen/network';
import type { Deps } from '../src/deps';

const scoringPool = new ScoringPool(Number(process.env.SCORING_POOL_SIZE || 2));

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

interface Sized {
  size: number;
  name: string;
  url: string;
  db: Knex;
  deps: Deps;
  interactions: number;
  agents: number;
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
  return {
    size,
    name,
    url: u.toString(),
    db,
    deps: { db, query: createQuery(db), now: () => now, caches: new Caches('test'), scoringPool } as unknown as Deps,
    interactions: net.interactions,
    agents: net.agents,
    genMs: Date.now() - g0,
  };
}

const s = (ms: number) => (ms / 1000).toFixed(2);
const parts = (f: FullResult) => {
  const w = f.weights.ms;
  return `facts ${w.facts} ms, weights ${w.compute} ms, write ${w.write} ms, clusters ${w.collusion} ms, reputation ${f.ms - w.facts - w.compute - w.write - w.collusion} ms`;
};

interface Timed {
  full1: FullResult;
  steady: FullResult;
  v1: FullResult | null;
  two: { first: number; both: number; order: string };
  lbFirst: number;
  inc: IncrementalResult;
  added: number;
  lbSteady: number;
}

async function main() {
  const args = process.argv.slice(2);
  const withV1 = args.includes('--v1');
  const rest = args.filter((a) => !a.startsWith('--'));
  const sizes = rest[0] === 'full' ? [1_000_000, 4_000_000] : rest.length ? rest.map(Number) : [50_000, 100_000];
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  const now = new Date();
  const nets: Sized[] = [];
  const seconds: Knex[] = [];
  const out: Timed[] = [];
  try {
    for (const size of sizes) {
      const n = await prepare(admin, size, now);
      nets.push(n);
      console.log(`size ${size}: ${n.interactions} interactions, ${n.agents} agents (generated in ${s(n.genMs)} s)`);
    }
    for (const n of nets) {
      const full1 = await runFull(n.deps);
      console.log(
        `size ${n.size}: full recompute, 1 worker ${s(full1.ms)} s (${parts(full1)}), ${full1.milestones} milestones`,
      );
      const steady = await runFull(n.deps);
      console.log(
        `size ${n.size}: steady 30-minute cycle (full recompute over stored results) ${s(steady.ms)} s (${parts(steady)})`,
      );
      const v1 = withV1 ? await runFull(n.deps, { v1Only: true }) : null;
      if (v1) console.log(`size ${n.size}: same, v1 only ${s(v1.ms)} s (${parts(v1)})`);
      // A second "worker process": its own connection pool on the same database.
      const db2 = createDb(n.url, 4);
      seconds.push(db2);
      const deps2 = { ...n.deps, db: db2, query: createQuery(db2) } as unknown as Deps;
      const t0 = Date.now();
      const ends: { who: string; at: number }[] = [];
      await Promise.all(
        [
          ['A', n.deps],
          ['B', deps2],
        ].map(([who, d]) =>
          runFull(d as Deps).then(
            () => ends.push({ who: who as string, at: Date.now() - t0 }),
            // The lock is taken under the pool's statement timeout (30 s): a run waiting longer fails.
            (e: Error) => ends.push({ who: `${who as string} failed (${e.message.slice(-40)})`, at: Date.now() - t0 }),
          ),
        ),
      );
      const two = { first: ends[0].at, both: ends[1].at, order: ends.map((e) => e.who).join(' then ') };
      console.log(
        `size ${n.size}: full recompute, 2 workers: first commit ${s(two.first)} s, second ${s(two.both)} s (${two.order}; one lock, so they serialise)`,
      );
      const l0 = Date.now();
      await runLeaderboards(n.deps);
      const lbFirst = Date.now() - l0;
      const added = await addFreshVotes(n.db, 1000, now);
      const inc = await runIncremental(n.deps);
      console.log(
        `size ${n.size}: first 15-minute run ${s(lbFirst)} s (freezes the history's ended weeks); incremental after ${added} new: ${inc.ms} ms ` +
          `(${inc.targets} touched agents = ${((100 * inc.targets) / n.agents).toFixed(1)} %, ${inc.weights?.interactions ?? 0} interactions rescored, ${inc.reputations} reputations)`,
      );
      const l1 = Date.now();
      await runLeaderboards(n.deps);
      const lbSteady = Date.now() - l1;
      console.log(`size ${n.size}: steady 15-minute cycle ${s(lbSteady)} s`);
      out.push({ full1, steady, v1, two, lbFirst, inc, added, lbSteady });
    }
    console.log(
      `\n| interactions | agents | full, 1 worker (s) | full, 2 workers: done / both (s) | 2 / 1 | steady 30-min cycle (s) | 15-min cycle: first / steady (s) | incremental after 1,000 (ms) | µs per interaction: full / 30-min / 15-min |`,
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const us = (ms: number, n: Sized) => ((ms * 1000) / n.interactions).toFixed(1);
    for (const [i, n] of nets.entries()) {
      const o = out[i];
      console.log(
        `| ${n.interactions} | ${n.agents} | ${s(o.full1.ms)} | ${s(o.two.first)} / ${s(o.two.both)} | ${(o.two.first / o.steady.ms).toFixed(2)} | ${s(o.steady.ms)} | ` +
          `${s(o.lbFirst)} / ${s(o.lbSteady)} | ${o.inc.ms} | ${us(o.full1.ms, n)} / ${us(o.steady.ms, n)} / ${us(o.lbSteady, n)} |`,
      );
    }
    for (let i = 1; i < nets.length; i++) {
      const [a, b] = [out[i - 1], out[i]];
      const d = nets[i].interactions / nets[i - 1].interactions;
      console.log(
        `ratios ${nets[i - 1].size} -> ${nets[i].size}: data x${d.toFixed(2)}; full x${(b.full1.ms / a.full1.ms).toFixed(2)}, ` +
          `2 workers (done) x${(b.two.first / a.two.first).toFixed(2)}, 30-min cycle x${(b.steady.ms / a.steady.ms).toFixed(2)}, ` +
          `15-min cycle x${(b.lbSteady / a.lbSteady).toFixed(2)} (first x${(b.lbFirst / a.lbFirst).toFixed(2)}), incremental x${(b.inc.ms / a.inc.ms).toFixed(2)}`,
      );
    }
  } finally {
    for (const d of seconds) await d.destroy();
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
