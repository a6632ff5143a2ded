/**
 * Scoring benchmark: full recompute (weights + reputation) over synthetic networks of growing
 * size, a second full run over the stored results (the 30-minute job's steady state), the live
 * leaderboards, then an incremental run after 1,000 new interactions.
 *
 *   npx tsx bench/scoring.ts            # quick: 50k and 100k interactions
 *   npx tsx bench/scoring.ts full       # 100k, 1M, 2M (several minutes on 2 cores)
 *   npx tsx bench/scoring.ts 200000 400000
 *
 * Each size gets its own fresh database (dropped afterwards) on the machine's PostgreSQL.
 * Targets (issue 5): full recompute of 1M interactions ≤ 20 s; 2x data ≤ 2.3x time; incremental
 * after 1,000 new interactions ≤ 2 s.
 */
import knexFactory from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { FullResult, IncrementalResult, runFull, runIncremental, runLeaderboards } from '../src/scoring/service';
import { destroyScoringPool, configureScoringPool } from '../src/scoring/pool';
import { generateNetwork, addFreshVotes } from './gen/network';
import type { Deps } from '../src/deps';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

interface Row {
  size: number;
  interactions: number;
  agents: number;
  genMs: number;
  full: FullResult;
  again: FullResult;
  lbMs: number;
  added: number;
  inc: IncrementalResult;
}

async function one(size: number): Promise<Row> {
  const name = `svc_bench_${size}_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const db = createDb(u.toString(), 4);
  try {
    await migrateAll(db, u.toString());
    const now = new Date();
    const g0 = Date.now();
    const net = await generateNetwork(db, { interactions: size }, now);
    const genMs = Date.now() - g0;
    const deps = { db, now: () => now } as unknown as Deps;
    const full = await runFull(deps);
    const again = await runFull(deps);
    const l0 = Date.now();
    await runLeaderboards(deps);
    const lbMs = Date.now() - l0;
    const added = await addFreshVotes(db, 1000, now);
    const inc = await runIncremental(deps);
    return { size, interactions: net.interactions, agents: net.agents, genMs, full, again, lbMs, added, inc };
  } finally {
    await db.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

const s = (ms: number) => (ms / 1000).toFixed(2);
const parts = (f: FullResult) =>
  `facts ${f.weights.ms.facts} ms, weights ${f.weights.ms.compute} ms, write ${f.weights.ms.write} ms, reputation ${f.ms - f.weights.ms.facts - f.weights.ms.compute - f.weights.ms.write} ms`;

async function main() {
  const args = process.argv.slice(2);
  const sizes = args[0] === 'full' ? [100_000, 1_000_000, 2_000_000] : args.length ? args.map(Number) : [50_000, 100_000];
  configureScoringPool(Number(process.env.SCORING_POOL_SIZE || 2));
  const rows: Row[] = [];
  for (const size of sizes) {
    const r = await one(size);
    rows.push(r);
    console.log(
      `size ${size}: ${r.interactions} interactions, ${r.agents} agents (generated in ${s(r.genMs)} s)\n` +
        `  full recompute ${s(r.full.ms)} s (${parts(r.full)}) = ${Math.round(r.interactions / (r.full.ms / 1000))} interactions/s, ${r.full.reputations} reputations, ${r.full.milestones} milestone notifications\n` +
        `  second full run ${s(r.again.ms)} s (${parts(r.again)})\n` +
        `  live leaderboards ${r.lbMs} ms\n` +
        `  incremental after ${r.added} new: ${r.inc.ms} ms (${r.inc.targets} touched agents = ${((100 * r.inc.targets) / r.agents).toFixed(1)} %, ` +
        `${r.inc.weights?.interactions ?? 0} interactions rescored, ${r.inc.weights?.rewritten ?? 0} edges changed, ${r.inc.reputations} reputations)`,
    );
  }
  const base = rows[0];
  console.log('\n| interactions | agents | full recompute (s) | interactions/s | time ratio vs first | data ratio vs first | second full run (s) | incremental after 1,000 (ms) |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.interactions} | ${r.agents} | ${s(r.full.ms)} | ${Math.round(r.interactions / (r.full.ms / 1000))} | ${(r.full.ms / base.full.ms).toFixed(2)} | ` +
        `${(r.interactions / base.interactions).toFixed(2)} | ${s(r.again.ms)} | ${r.inc.ms} |`,
    );
  }
  for (let i = 1; i < rows.length; i++) {
    const d = rows[i].interactions / rows[i - 1].interactions;
    const t = rows[i].full.ms / rows[i - 1].full.ms;
    const t2 = rows[i].again.ms / rows[i - 1].again.ms;
    console.log(`scaling ${rows[i - 1].size} -> ${rows[i].size}: data x${d.toFixed(2)}, time x${t.toFixed(2)} (second runs x${t2.toFixed(2)}; time per row x${(t / d).toFixed(2)})`);
  }
  await destroyScoringPool();
}

main().catch(async (e) => {
  console.error(e);
  await destroyScoringPool();
  process.exit(1);
});
