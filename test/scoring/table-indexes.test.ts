import { expect } from 'chai';
import type { Knex } from 'knex';
import { getContext } from '../helpers/context';
import { copyIndexes, dropIndexes } from '../../src/scoring/table-indexes';

/** A built table's indexes are its live twin's, read from the catalog (a fleet run's edges and support pairs). */
describe('scoring: a built table gets its live table indexes', () => {
  let db: Knex;

  const defs = async (table: string) =>
    (
      await db.raw(
        `select indexname::text n, regexp_replace(indexdef, ?, '') d from pg_indexes where tablename = ? order by indexname`,
        ['^CREATE (UNIQUE )?INDEX \\S+ ON \\S+', table],
      )
    ).rows.map((r: { n: string; d: string }) => `${r.n.replace(table, '<t>')}${r.d}`);

  before(async () => {
    db = (await getContext()).db;
    await db.raw(`drop table if exists ti_live, ti_built;
      create table ti_live (id int8 primary key, a int, b text, unique (a, b));
      create index ti_live_b_idx on ti_live (b) where a > 0;
      create table ti_built (like ti_live including indexes including constraints)`);
    // `like` names the built indexes its own way: as a run leaves them, every one of them goes first.
    await dropIndexes(db, 'ti_built');
  });
  after(() => db.raw('drop table if exists ti_live, ti_built'));

  it('drops every index of a table, constraints included, and builds the live ones under its own names', async () => {
    expect(await defs('ti_built')).to.deep.equal([]);
    await db('ti_built').insert([
      { id: 1, a: 1, b: 'x' },
      { id: 2, a: 1, b: 'y' },
    ]);
    await copyIndexes(db, 'ti_live', 'ti_built');
    expect(await defs('ti_built')).to.deep.equal(await defs('ti_live'));
    expect(await defs('ti_built')).to.have.length(3);
    // The primary key and the unique constraint hold on the built table.
    const dup = await db('ti_built')
      .insert({ id: 1, a: 2, b: 'z' })
      .then(
        () => null,
        (e) => e.code,
      );
    expect(dup).to.equal('23505');
    // Building again adds nothing (each index is there).
    await copyIndexes(db, 'ti_live', 'ti_built');
    expect(await defs('ti_built')).to.have.length(3);
    await dropIndexes(db, 'ti_built');
    expect(await defs('ti_built')).to.deep.equal([]);
  });

  it('refuses a live index not named after its table (its built name would be a guess)', async () => {
    await db.raw('create index ti_other on ti_live (a)');
    try {
      const err = await copyIndexes(db, 'ti_live', 'ti_built').then(
        () => null,
        (e: Error) => e.message,
      );
      expect(err).to.equal('index ti_other of ti_live is not named ti_live_<suffix>');
    } finally {
      await db.raw('drop index ti_other');
    }
  });
});
