import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { withoutPreparedStatements } from '../../src/db/prepared';

async function preparedTexts(trx: import('knex').Knex.Transaction): Promise<string[]> {
  return (await trx.raw('select statement from pg_prepared_statements')).rows.map(
    (r: { statement: string }) => r.statement,
  );
}

describe('prepared statements (src/db/prepared.ts)', () => {
  it('a parameterised query runs as a named statement of its connection, also inside a transaction; one without bindings does not', async () => {
    const { db } = await getContext();
    const tag = `p${Date.now()}`;
    await db.transaction(async (trx) => {
      expect((await trx.raw(`select ?::text as ${tag}`, ['x'])).rows[0][tag]).to.equal('x');
      await trx.raw(`select 1 as ${tag}_plain`);
      const texts = await preparedTexts(trx);
      expect(texts).to.include(`select $1::text as ${tag}`);
      expect(texts.some((t) => t.includes(`${tag}_plain`))).to.equal(false);
      // Run again: the same statement, still one entry.
      await trx.raw(`select ?::text as ${tag}`, ['y']);
      expect((await preparedTexts(trx)).filter((t) => t === `select $1::text as ${tag}`)).to.have.length(1);
    });
  });

  it('a batch transaction (withoutPreparedStatements) runs its statements unnamed', async () => {
    const { db } = await getContext();
    const tag = `b${Date.now()}`;
    await db.transaction(async (trx) => {
      withoutPreparedStatements(trx);
      expect((await trx.raw(`select ?::int + 1 as ${tag}`, [1])).rows[0][tag]).to.equal(2);
      expect((await preparedTexts(trx)).some((t) => t.includes(tag))).to.equal(false);
    });
    // The next transaction on the pool is not affected.
    await db.transaction(async (trx) => {
      await trx.raw(`select ?::int + 2 as ${tag}`, [1]);
      expect(await preparedTexts(trx)).to.include(`select $1::int + 2 as ${tag}`);
    });
  });
});
