/**
 * The live week's refresh near the end of a week, when 5,000 new interactions per 15 minutes
 * change most of the agents the week holds: the refresh as the 15-minute run makes it, against
 * the totals summed again agent by agent and against a rebuild from the whole week, both timed in
 * transactions rolled back (the same state for each). A fresh database per run, dropped after.
 *
 *   npx tsx bench/live-week.ts [--size 100000] [--cycles 3]
 */
import knexFactory from 'knex';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { createQuery } from '../src/db/query';
import { runFull, runIncremental } from '../src/scoring/service';
import { ScoringPool } from '../src/scoring/pool';
import { Caches } from '../src/caches';
import { invalidateLiveWeek, writeLiveSnapshots } from '../src/scoring/live-week';
import { lockScoring } from '../src/scoring/transaction';
import { weekOf } from '../src/scoring/week';
import { generateNetwork } from './gen/network';
import { numberArg } from './lib/args';
import { ageWritten } from './lib/age-written';
import type { Deps } from '../src/deps';

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const MINUTE = 60_000;
const size = numberArg('size', 100_000);
const cycleCount = numberArg('cycles', 3);

class Rollback extends Error {}

async function main() {
  const admin = knexFactory({ client: 'pg', connection: ADMIN });
  const name = `svc_bench_live_${process.pid}`;
  await admin.raw(`create database "${name}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + name;
  const db = createDb(u.toString(), 4);
  const pool = new ScoringPool(2);
  try {
    await migrateAll(db, u.toString());
    // Sunday evening: the live week holds about a thirteenth of the 90-day window.
    const clock = { now: new Date('2027-03-07T18:00:00Z') };
    const week = weekOf(clock.now);
    const net = await generateNetwork(db, { interactions: size }, clock.now);
    const deps = {
      db,
      query: createQuery(db),
      now: () => clock.now,
      caches: new Caches('test'),
      scoringPool: pool,
    } as unknown as Deps;
    await runFull(deps);
    const refresh = () =>
      db.transaction(async (trx) => {
        await lockScoring(trx);
        return writeLiveSnapshots(trx, week, clock.now);
      });
    /** `fn` in a transaction rolled back: its time, and what it returned. */
    async function rolledBack<T>(fn: (trx: import('knex').Knex.Transaction) => Promise<T>) {
      let out: T | undefined;
      const t0 = Date.now();
      await db
        .transaction(async (trx) => {
          await lockScoring(trx);
          out = await fn(trx);
          throw new Rollback();
        })
        .catch((e) => {
          if (!(e instanceof Rollback)) throw e;
        });
      return { ms: Date.now() - t0, out: out! };
    }
    const t0 = Date.now();
    const first = await refresh();
    console.log(
      `size ${size}: first refresh (rebuild) ${Date.now() - t0} ms, ${first.totals.agents} agents in the week`,
    );
    for (let i = 0; i < cycleCount; i++) {
      const written = new Date((await db.raw('select clock_timestamp() t')).rows[0].t);
      const from = clock.now;
      clock.now = new Date(from.getTime() + 15 * MINUTE);
      await net.addActivity(db, 5_000, from, clock.now);
      await runIncremental(deps);
      const stored = Number(
        (await db('leaderboard_week_totals').where({ model: 'reputation_v1' }).count('* as n').first())!.n,
      );
      const run = await rolledBack((trx) => writeLiveSnapshots(trx, week, clock.now));
      const rebuild = await rolledBack(async (trx) => {
        await invalidateLiveWeek(trx, clock.now);
        return writeLiveSnapshots(trx, week, clock.now);
      });
      const t1 = Date.now();
      await refresh();
      const kept = Date.now() - t1;
      console.log(
        `cycle ${i + 1}: ${stored} agents stored; refresh ${run.ms} ms (${run.out.totals.changed} agents changed: ${run.out.totals.rebuilt ? 'rebuilt' : 'summed again'}), ` +
          `whole-week rebuild ${rebuild.ms} ms, refresh committed ${kept} ms`,
      );
      // As a real schedule's runs minutes apart: this cycle's rows are not read again by the next.
      await ageWritten(db, written);
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
