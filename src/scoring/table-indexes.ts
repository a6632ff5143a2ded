import type { Knex } from 'knex';

/**
 * A built table loads without indexes and gets its live table's once loaded: the definitions are
 * read from the catalog, so an index a migration adds to a live table is built on its built twin
 * too, with no list to keep in step. Index names follow `<table>_<suffix>` (swapTables keeps them so).
 */

interface IndexRow {
  name: string;
  def: string;
  constraint: string | null;
  constraintDef: string | null;
}

async function indexesOf(db: Knex | Knex.Transaction, table: string): Promise<IndexRow[]> {
  const r = await db.raw(
    `select ci.relname "name", pg_get_indexdef(i.indexrelid) def, c.conname "constraint",
       pg_get_constraintdef(c.oid) "constraintDef"
     from pg_index i join pg_class ci on ci.oid = i.indexrelid
     left join pg_constraint c on c.conindid = i.indexrelid and c.conrelid = i.indrelid
     where i.indrelid = ?::regclass order by ci.relname`,
    [table],
  );
  return r.rows;
}

/** Drops every index of `table`, primary key and other index-backed constraints included. */
export async function dropIndexes(db: Knex | Knex.Transaction, table: string): Promise<void> {
  for (const ix of await indexesOf(db, table))
    await db.raw(ix.constraint ? `alter table ${table} drop constraint "${ix.constraint}"` : `drop index "${ix.name}"`);
}

/** Builds on `built` each index `live` has that `built` lacks, named `<built>_<suffix>`. */
export async function copyIndexes(db: Knex | Knex.Transaction, live: string, built: string): Promise<void> {
  const have = new Set((await indexesOf(db, built)).map((ix) => ix.name));
  for (const ix of await indexesOf(db, live)) {
    if (!ix.name.startsWith(`${live}_`)) throw new Error(`index ${ix.name} of ${live} is not named ${live}_<suffix>`);
    const name = `${built}_${ix.name.slice(live.length + 1)}`;
    if (have.has(name)) continue;
    await db.raw(
      ix.constraint
        ? `alter table ${built} add constraint "${name}" ${ix.constraintDef}`
        : ix.def.replace(/^(CREATE (?:UNIQUE )?INDEX )\S+( ON (?:ONLY )?)\S+/, `$1"${name}"$2${built}`),
    );
  }
}
