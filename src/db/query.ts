import type { Knex } from 'knex';

/**
 * Named statements: the hot SQL of the server, each written once, beside the code that runs it,
 * under a name of its own (as graphile-worker names each of its statements). Run through
 * `deps.query`, a named statement becomes a server-side prepared statement of each pooled
 * connection: PostgreSQL parses and plans it on its first run there and afterwards only binds and
 * executes it (a post read: 3.7k/s unnamed, 10.4k/s named, on this machine). Every other
 * statement (knex builders, `db.raw`) runs unnamed and is parsed and planned on each run, which
 * is what rare statements and batch work want: scoring's statements run once per run over
 * temporary tables, where a cached plan would only be invalidated.
 *
 * A statement's text uses knex's `?` placeholders and must not vary with its input (a name is
 * bound to one text on a connection; pg refuses a name reused for another text).
 */
// any (default row): a statement declared without its row type reads untyped rows, as pg's own results do.
export interface Statement<Row = Record<string, any>> {
  readonly name: string;
  readonly text: string;
  /** Type only: the shape of a row the statement returns. */
  readonly row?: Row;
}

const declared = new Map<string, string>();

/** Declares a named statement; a name stands for one text in the whole process. */
export function statement<Row = Record<string, any>>(name: string, text: string): Statement<Row> {
  const prior = declared.get(name);
  if (prior !== undefined && prior !== text) throw new Error(`statement name "${name}" is already used for other SQL`);
  declared.set(name, text);
  return { name, text };
}

/** Names of every statement declared so far (tests compare them with pg_prepared_statements). */
export function declaredStatements(): string[] {
  return [...declared.keys()];
}

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/**
 * Runs a named statement with its values on `via` (a transaction) or else on the pool.
 * Owned by `Deps` (`deps.query`), built by the composition root with `createQuery(db)`.
 */
export type Query = <Row>(
  statement: Statement<Row>,
  values: readonly unknown[],
  via?: Knex,
) => Promise<QueryResult<Row>>;

export function createQuery(db: Knex): Query {
  return async <Row>(s: Statement<Row>, values: readonly unknown[], via: Knex = db) => {
    const r = await via.raw(s.text, values as Knex.RawBinding[]).options({ name: s.name });
    return { rows: r.rows as Row[], rowCount: r.rowCount as number };
  };
}
