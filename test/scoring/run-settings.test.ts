import { expect } from 'chai';
import { ADMIN_PG_URL } from '../helpers/context';
import { createDb } from '../../src/db/knex';
import { SCHEDULE } from '../../src/scoring/policy';
import { tunePartition, tuneRun } from '../../src/scoring/transaction';

/**
 * Staging tables' local buffers can only grow before a connection's first temporary table: every
 * scoring transaction raises them first thing (an incremental run creates its first staging table
 * long before its weights), and a connection that already met one keeps its size without failing.
 */
describe('scoring: run settings', () => {
  it('a fresh connection gets the staging buffers before its first temporary table; a used one runs on unchanged', async () => {
    const db = createDb(ADMIN_PG_URL, 1); // one connection: every statement below runs on it
    try {
      await db.transaction(async (trx) => {
        await tuneRun(trx);
        await trx.raw('create temp table sc_settings_probe (i int) on commit drop');
      });
      expect((await db.raw('show temp_buffers')).rows[0].temp_buffers).to.equal(SCHEDULE.tempBuffers);
    } finally {
      await db.destroy();
    }

    const used = createDb(ADMIN_PG_URL, 1);
    try {
      // A temporary table's rows allocate the session's local buffers, at the default size.
      await used.raw('create temp table sc_settings_early as select 1 as i');
      await used.transaction(async (trx) => {
        await tuneRun(trx);
        await trx.raw('create temp table sc_settings_probe (i int) on commit drop');
        expect((await trx.raw('show statement_timeout')).rows[0].statement_timeout).to.equal('0');
      });
      expect((await used.raw('show temp_buffers')).rows[0].temp_buffers).to.equal('8MB');
    } finally {
      await used.destroy();
    }
  });

  it("a fleet partition's transaction runs without parallel query workers, a run's settings otherwise; the connection keeps its own after", async () => {
    const db = createDb(ADMIN_PG_URL, 1);
    try {
      const before = (await db.raw('show max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather;
      expect(before).to.not.equal('0');
      await db.transaction(async (trx) => {
        await tunePartition(trx);
        expect(
          (await trx.raw('show max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather,
        ).to.equal('0');
        expect((await trx.raw('show statement_timeout')).rows[0].statement_timeout).to.equal('0');
        expect((await trx.raw('show work_mem')).rows[0].work_mem).to.equal(SCHEDULE.workMem);
      });
      expect((await db.raw('show max_parallel_workers_per_gather')).rows[0].max_parallel_workers_per_gather).to.equal(
        before,
      );
    } finally {
      await db.destroy();
    }
  });
});
