/**
 * Answers written as JSON by PostgreSQL: a read whose body is one row's JSON selects
 * `row_to_json(t)::text`, one column for the web process to pass on instead of many to describe,
 * parse, map and serialize. A nested object is `row_to_json(x)` of a `cross join lateral (select
 * ...) x`, which the planner folds into the row's projection (a scalar subquery per object would
 * run as a subplan of its own).
 * row_to_json writes what JSON.stringify writes for the same values: no white space, the same
 * escapes (\b \f \n \r \t \" \\ and \u00xx for other control characters; none for U+2028 or
 * non-ASCII), keys in the order of the columns, arrays as JSON arrays. Timestamps go through
 * `isoText`. Each such read has a test comparing it with JSON.stringify of its row-mapped twin.
 */

/**
 * A timestamptz column as JSON.stringify writes the Date pg reads from it: UTC, milliseconds
 * truncated (pg computes the fraction as 1000 × the parsed decimal, which truncates to the same
 * millisecond for every microsecond value), null as null.
 */
export function isoText(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** A constant string as an SQL literal (for a constant text of a named statement). */
export function sqlText(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
