/**
 * Scoring benchmark: full recompute (weights + reputation + live leaderboards) over synthetic
 * networks of growing size, then an incremental run after 1,000 new interactions.
 *
 *   npx tsx bench/scoring.ts            # quick: 50k and 100k interactions
 *   npx tsx bench/scoring.ts full       # 100k, 1M, 2M (several minutes on 2 cores)
 *   npx tsx bench/scoring.ts 200000 400000
 *
 * Each size gets its own fresh database (dropped afterwards) on the machine's PostgreSQL.
 */
import knexFactory from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { runFull, runIncremental, runLeaderboards } from '../src/scoring/service';
import { destroyScoringPool, configureScoringPool } from '../src/scoring/pool';
import { generateNetwork, addFreshVotes } from './gen/network';
import type { Deps } from '../src/deps';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function one(size: number) {
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
    const f = await runFull(deps);
    const l0 = Date.now();
    await runLeaderboards(deps);
    const lbMs = Date.now() - l0;
    await addFreshVotes(db, 1000, now);
    const inc = await runIncremental(deps);
    return { size, interactions: net.interactions, agents: net.agents, genMs, full: f, lbMs, inc };
  } finally {
    await db.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

async function main() {
  const args = process.argv.slice(2);
  const sizes = args[0] === 'full' ? [100_000, 1_000_000, 2_000_000] : args.length ? args.map(Number) : [50_000, 100_000];
  configureScoringPool(Number(process.env.SCORING_POOL_SIZE || 2));
  const rows = [];
  for (const s of sizes) {
    const r = await one(s);
    rows.push(r);
    const secs = r.full.ms / 1000;
    console.log(
      `size ${s}: ${r.interactions} interactions, ${r.agents} agents (generated in ${(r.genMs / 1000).toFixed(1)} s) | full recompute ${secs.toFixed(2)} s ` +
        `(facts ${r.full.weights.ms.facts} ms, weights ${r.full.weights.ms.compute} ms, write ${r.full.weights.ms.write} ms, reputation ${r.full.ms - r.full.weights.ms.facts - r.full.weights.ms.compute - r.full.weights.ms.write} ms) ` +
        `= ${Math.round(r.interactions / secs)} interactions/s | leaderboards ${r.lbMs} ms | incremental after 1,000 new: ${r.inc.ms} ms (${r.inc.weights?.interactions ?? 0} rescored, ${r.inc.reputations} reputations)`,
    );
  }
  const base = rows[0];
  console.log('\n| interactions | full recompute (s) | interactions/s | time ratio vs first | data ratio | incremental after 1,000 (ms) |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.interactions} | ${(r.full.ms / 1000).toFixed(2)} | ${Math.round(r.interactions / (r.full.ms / 1000))} | ${(r.full.ms / base.full.ms).toFixed(2)} | ${(r.interactions / base.interactions).toFixed(2)} | ${r.inc.ms} |`);
  }
  for (let i = 1; i < rows.length; i++) {
    const d = rows[i].interactions / rows[i - 1].interactions;
    const t = rows[i].full.ms / rows[i - 1].full.ms;
    console.log(`scaling ${rows[i - 1].size} -> ${rows[i].size}: data x${d.toFixed(2)}, time x${t.toFixed(2)} (time per row x${(t / d).toFixed(2)})`);
  }
  await destroyScoringPool();
}

main().catch(async (e) => {
  console.error(e);
  await destroyScoringPool();
  process.exit(1);
});
