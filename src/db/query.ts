import type { Knex } from 'knex';
import type pg from 'pg';

/**
 * Named statements: the hot SQL of the server, each written once, beside the code that runs it,
 * under a name of its own (as graphile-worker names each of its statements). Run through
 * `deps.query`, a named statement becomes a server-side prepared statement of each pooled
 * connection: PostgreSQL parses and plans it on its first run there and afterwards only binds and
 * executes it (a post read: 3.7k/s unnamed, 10.4k/s named, on this machine), as long as it keeps to
 * the generic plan: where the estimate depends on the values (an `unnest` of array parameters
 * knows their length), a custom plan can win and is planned again on every run; such arrays are
 * unnested from a materialized row instead (src/webhooks/fanout.ts). Every other statement (knex
 * builders, `db.raw`) runs unnamed and is parsed and planned on each run, which is what rare
 * statements and batch work want: scoring's statements run once per run over temporary tables,
 * where a cached plan would only be invalidated.
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

/** What the pool path sends: the text with `$n` placeholders and how many values it takes. */
interface Positional {
  text: string;
  params: number;
}

/** Each declared name's text, as written and as sent. */
const declared = new Map<string, { text: string; positional: Positional }>();

/**
 * knex's own rewriting of a raw text, done once per statement instead of on every run: each `?`
 * becomes `$1`, `$2`, ... and an escaped `\?` a literal `?` (`??`, an identifier binding, has no
 * place in a constant text).
 */
function toPositional(name: string, text: string): Positional {
  let params = 0;
  const out = text.replace(/\\?\?\??/g, (m) => {
    if (m === '\\?') return '?';
    if (m === '??') throw new Error(`statement "${name}": ?? (identifier binding) is not supported`);
    return `$${++params}`;
  });
  return { text: out, params };
}

/** Declares a named statement; a name stands for one text in the whole process. */
export function statement<Row = Record<string, any>>(name: string, text: string): Statement<Row> {
  const prior = declared.get(name);
  if (prior === undefined) declared.set(name, { text, positional: toPositional(name, text) });
  else if (prior.text !== text) throw new Error(`statement name "${name}" is already used for other SQL`);
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

/** The part of knex's client the pool path uses: its pool (tarn) of pg connections, and its events. */
interface KnexClient {
  acquireConnection(): Promise<pg.Client & { __knexUid?: string }>;
  releaseConnection(connection: unknown): Promise<void>;
  emit(event: 'query', data: object): boolean;
}

/**
 * On the pool, a statement goes straight to a connection of knex's pool (same connections, same
 * timeouts; one a connection error disposed of is replaced as before): knex's per-query work
 * (building a Raw, rewriting placeholders, its runner) cost about 6 % of the web process's CPU in
 * the mixed load (BENCHMARKS.md, Load). knex's checks stay (a value count that does not match the
 * text, an undefined value) and so does its 'query' event, which tests count statements by. In a
 * transaction (`via`), the statement runs through knex on the transaction's connection.
 */
export function createQuery(db: Knex): Query {
  const client = db.client as unknown as KnexClient;
  return async <Row>(s: Statement<Row>, values: readonly unknown[], via: Knex = db) => {
    if (via !== db) {
      const r = await via.raw(s.text, values as Knex.RawBinding[]).options({ name: s.name });
      return { rows: r.rows as Row[], rowCount: r.rowCount as number };
    }
    const d = declared.get(s.name);
    const p = d?.text === s.text ? d.positional : toPositional(s.name, s.text);
    if (values.length !== p.params)
      throw new Error(`statement "${s.name}": expected ${p.params} values, got ${values.length}`);
    if (values.includes(undefined))
      throw new Error(`statement "${s.name}": undefined value at ${values.indexOf(undefined)}`);
    const connection = await client.acquireConnection();
    try {
      client.emit('query', {
        __knexUid: connection.__knexUid,
        method: 'raw',
        sql: p.text,
        bindings: values,
        options: { name: s.name },
      });
      const r = await connection.query({ name: s.name, text: p.text, values: values as unknown[] });
      return { rows: r.rows as Row[], rowCount: r.rowCount ?? 0 };
    } finally {
      await client.releaseConnection(connection);
    }
  };
}
