/**
 * What a debounced scoring run costs the reputation cache: every agent's reputation is read into
 * two caches, `n` interactions arrive, an incremental run announces what it rescored; one cache
 * gets that announcement (only the rescored agents' entries go), the other the whole `scores`
 * change every run made before (every entry goes); then every agent is read again from each.
 * A fresh database (bench/gen/network.ts), dropped after.
 *
 *   npx tsx bench/reputation-runs.ts [--size 20000] [--activity 300] [--cycles 3]
 */
import knexFactory from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { createQuery } from '../src/db/query';
import { runFull, runIncremental } from '../src/scoring/service';
import { ScoringPool } from '../src/scoring/pool';
import { Caches } from '../src/caches';
import { getReputationBody } from '../src/reputation/service';
import { generateNetwork } from './gen/network';
import { numberArg } from './lib/args';
import { ageWritten } from './lib/age-written';
import type { Deps } from '../src/deps';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const size = numberArg('size', 20_000);
const activity = numberArg('activity', 300);
const cycleCount = numberArg('cycles', 3);

async function main() {
  const admin = knexFactory({ client: 'pg', connection: ADMIN });
  const name = `svc_bench_reprun_${process.pid}`;
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const db = createDb(u.toString(), 4);
  const pool = new ScoringPool(2);
  try {
    await migrateAll(db, u.toString());
    const clock = { now: new Date('2027-03-07T18:00:00Z') };
    const net = await generateNetwork(db, { interactions: size }, clock.now);
    const scoped = new Caches('production');
    const whole = new Caches('production');
    const query = createQuery(db);
    const deps = { db, query, now: () => clock.now, caches: scoped, scoringPool: pool } as unknown as Deps;
    await runFull(deps);
    // As a network written long before its first run: no row is read again as a late commit.
    await db.raw(`update interactions set updated_at = clock_timestamp() - interval '1 hour'`);
    await db.raw(`update scoring_agent_changes set at = clock_timestamp() - interval '1 hour'`);
    const handles: string[] = (await db('agents').select('handle')).map((r: { handle: string }) => r.handle);
    /** Reads every agent's reputation through `caches`: µs per read. */
    const readAll = async (caches: Caches) => {
      const t0 = process.hrtime.bigint();
      for (const h of handles) await getReputationBody(db, query, caches, h, clock.now, false);
      return Number(process.hrtime.bigint() - t0) / 1000 / handles.length;
    };
    for (const c of [scoped, whole]) await readAll(c);
    console.log(`${handles.length} agents, ${size} interactions; ${activity} new interactions per run`);
    for (let i = 0; i < cycleCount; i++) {
      for (const c of [scoped, whole]) await readAll(c);
      const warm = await readAll(scoped);
      const written = new Date((await db.raw('select clock_timestamp() t')).rows[0].t);
      const from = clock.now;
      clock.now = new Date(from.getTime() + 30_000);
      await net.addActivity(db, activity, from, clock.now);
      const r = await runIncremental(deps);
      whole.evict([{ kind: 'scores' }]);
      const kept = scoped.reputation.size;
      const afterScoped = await readAll(scoped);
      const afterWhole = await readAll(whole);
      console.log(
        `run ${i + 1}: ${r.reputations} reputations written; entries kept ${kept} of ${handles.length}; ` +
          `next read of every agent: ${afterScoped.toFixed(0)} µs/read scoped, ${afterWhole.toFixed(0)} µs/read whole (cached: ${warm.toFixed(0)} µs/read)`,
      );
      // As runs 30 s apart: this cycle's rows are not read again by the next.
      await ageWritten(db, written, true);
    }
  } finally {
    await pool.destroy();
    await db.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
