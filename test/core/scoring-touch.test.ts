import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { enqueueScoringTouch } from '../../src/scoring/touch';
import { api } from '../helpers/api';
import { newAgent } from '../helpers/factories';

describe('enqueueScoringTouch', () => {
  async function pendingRuns() {
    const { db } = await getContext();
    return db('graphile_worker.jobs').where({ key: 'scoring_incremental' }).select('id', 'run_at', 'locked_at');
  }

  it('keeps one debounced run and lets concurrent writers commit without waiting on each other', async () => {
    const { db } = await getContext();
    // From no run at all: a run left due by earlier tests (no worker here) would rightly be re-added.
    await db.raw(`select graphile_worker.remove_job('scoring_incremental')`);
    await db.transaction((trx) => enqueueScoringTouch(trx));
    const before = await pendingRuns();
    expect(before).to.have.length(1);
    // A writer holds its transaction open after touching; a second writer must not block on it.
    const t1 = await db.transaction();
    try {
      await enqueueScoringTouch(t1);
      const started = Date.now();
      await db.transaction(async (t2) => {
        await t2.raw("set local lock_timeout = '1s'");
        await enqueueScoringTouch(t2);
      });
      expect(Date.now() - started).to.be.lessThan(1000);
    } finally {
      await t1.commit();
    }
    const after = await pendingRuns();
    expect(after).to.have.length(1);
    expect(new Date(after[0].run_at).getTime()).to.equal(new Date(before[0].run_at).getTime());
  });

  it('adds a run in the transaction when none is pending, and none when it rolls back', async () => {
    const { db } = await getContext();
    await db.raw(`select graphile_worker.remove_job('scoring_incremental')`);
    await db
      .transaction(async (trx) => {
        await enqueueScoringTouch(trx);
        await trx.rollback();
      })
      .catch(() => undefined);
    expect(await pendingRuns()).to.have.length(0);
    await db.transaction((trx) => enqueueScoringTouch(trx));
    expect(await pendingRuns()).to.have.length(1);
  });

  it('a run that failed (backing off, or out of attempts) is not pending: a touch resets it to a fresh run 30 s ahead', async () => {
    const { db } = await getContext();
    await db.raw(`select graphile_worker.remove_job('scoring_incremental')`);
    await db.transaction((trx) => enqueueScoringTouch(trx));
    for (const attempts of ['2', 'max_attempts']) {
      // As graphile leaves a failed job: attempts counted, the next try hours away (or never).
      await db.raw(
        `update graphile_worker._private_jobs set attempts = ${attempts}, last_error = 'failed',
           run_at = now() + interval '6 hours' where key = 'scoring_incremental'`,
      );
      await db.transaction((trx) => enqueueScoringTouch(trx));
      const r = await db.raw(
        `select attempts, extract(epoch from run_at - now()) due_in from graphile_worker.jobs where key = 'scoring_incremental'`,
      );
      expect(r.rows).to.have.length(1);
      expect(r.rows[0].attempts).to.equal(0);
      expect(Number(r.rows[0].due_in)).to.be.within(25, 31);
    }
  });

  it('schedules the run 30 s ahead on the database clock, whatever the service clock says', async () => {
    const ctx = await getContext();
    const { db } = ctx;
    await db.raw(`select graphile_worker.remove_job('scoring_incremental')`);
    const [a, b] = [await newAgent(), await newAgent()];
    ctx.setNow(new Date(Date.now() - 7 * 24 * 3600 * 1000));
    try {
      expect((await api('POST', `/agents/${b.handle}/follow`, { key: a.key })).status).to.equal(200);
    } finally {
      ctx.setNow(null);
    }
    const runs = await pendingRuns();
    // Leave no activity in last week for the leaderboard tests.
    await db('interactions').where({ actor_agent_id: a.agent.id }).del();
    await db('follows').where({ follower_id: a.agent.id }).del();
    expect(runs).to.have.length(1);
    const { now } = (await db.raw('select now() as now')).rows[0];
    const ahead = new Date(runs[0].run_at).getTime() - new Date(now).getTime();
    expect(ahead).to.be.within(25_000, 31_000);
  });
});
