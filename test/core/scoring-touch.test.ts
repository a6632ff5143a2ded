import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { enqueueScoringTouch } from '../../src/scoring/touch';

describe('enqueueScoringTouch', () => {
  async function pendingRuns() {
    const { db } = await getContext();
    return db('graphile_worker.jobs').where({ key: 'scoring_incremental' }).select('id', 'run_at', 'locked_at');
  }

  it('keeps one debounced run and lets concurrent writers commit without waiting on each other', async () => {
    const { db } = await getContext();
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
    await db.transaction(async (trx) => {
      await enqueueScoringTouch(trx);
      await trx.rollback();
    }).catch(() => undefined);
    expect(await pendingRuns()).to.have.length(0);
    await db.transaction((trx) => enqueueScoringTouch(trx));
    expect(await pendingRuns()).to.have.length(1);
  });
});
