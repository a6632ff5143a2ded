import { createHash } from 'crypto';
import type { Knex } from 'knex';

/**
 * Server-side prepared statements for every parameterised query. PostgreSQL spends most of a
 * short query's time parsing and planning it (a post read: 3.7k/s unnamed, 10.4k/s named, on
 * this machine); a name derived from the SQL text lets each pooled connection parse and plan a
 * statement once and only bind and execute it afterwards. Queries without bindings keep the
 * simple protocol (they may hold several statements, like migrations). Each connection keeps
 * at most MAX_PER_CONNECTION statements, so SQL whose text varies with its input (bulk inserts,
 * IN lists) cannot grow a backend's memory without bound: past the cap a query runs unnamed.
 */
const MAX_PER_CONNECTION = 500;
const MAX_TEXT = 8192;
const names = new Map<string, string>();
const perConnection = new WeakMap<object, Set<string>>();

function nameOf(text: string): string {
  let n = names.get(text);
  if (n === undefined) {
    n = 'q' + createHash('sha1').update(text).digest('base64url').slice(0, 20);
    if (names.size > 10_000) names.clear();
    names.set(text, n);
  }
  return n;
}

type QueryFn = (
  connection: object,
  obj: { sql?: string; bindings?: unknown[]; options?: Record<string, unknown> },
) => Promise<unknown>;
const PATCHED = Symbol.for('svc.preparedStatements');
const UNPREPARED = Symbol.for('svc.unprepared');

/**
 * Batch transactions (scoring) run their statements unnamed: each runs once per run over temp
 * tables that are dropped at commit, so a cached plan would only be invalidated, and a generic
 * plan chosen after a few runs could misjudge row counts by orders of magnitude.
 */
export function withoutPreparedStatements(trx: Knex.Transaction): void {
  (trx.client as unknown as Record<symbol, boolean>)[UNPREPARED] = true;
}

/**
 * Patches the dialect's prototype, not the instance: knex builds each transaction's client with
 * Object.create(prototype), so an instance patch would miss every statement run in a transaction.
 */
export function usePreparedStatements(db: Knex): void {
  const proto = Object.getPrototypeOf(db.client) as { _query: QueryFn; [PATCHED]?: true };
  if (proto[PATCHED]) return;
  const original = proto._query;
  proto[PATCHED] = true;
  proto._query = function (this: Record<symbol, boolean | undefined>, connection, obj) {
    if (
      !this[UNPREPARED] &&
      obj.sql &&
      obj.bindings &&
      obj.bindings.length > 0 &&
      obj.sql.length <= MAX_TEXT &&
      !obj.options?.name
    ) {
      let seen = perConnection.get(connection);
      if (!seen) perConnection.set(connection, (seen = new Set()));
      const name = nameOf(obj.sql);
      if (seen.has(name) || seen.size < MAX_PER_CONNECTION) {
        seen.add(name);
        obj.options = { ...obj.options, name };
      }
    }
    return original.call(this, connection, obj);
  };
}
