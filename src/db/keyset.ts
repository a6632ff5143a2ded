import { createHash } from 'node:crypto';
import { AppError } from '../errors';

/**
 * Opaque keyset cursors over (timestamp, uuid) for lists ordered newest first: the position is
 * microseconds since the epoch (PostgreSQL's precision, so no row is skipped or repeated) and the
 * row id breaking ties.
 */
export interface KeysetPosition {
  us: number;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A list whose rows' ids could stand in another list's cursor (an agent's followers and its
 * following both hold agent ids) names itself (`list`, e.g. `followers:<agent id>`): its cursors
 * carry a short hash of that name, and a cursor of any other list is refused instead of paging
 * from a foreign position.
 */
const listTag = (list: string) => createHash('sha256').update(list).digest('hex').slice(0, 12);

export function encodeKeyset(p: KeysetPosition, list?: string): string {
  return Buffer.from(`${p.us}.${p.id}${list === undefined ? '' : `.${listTag(list)}`}`, 'utf8').toString('base64url');
}

/** 400 VALIDATION_FAILED at query/cursor for anything this service (and this `list`) did not issue. */
export function decodeKeyset(cursor: string, list?: string): KeysetPosition {
  const m = /^(\d{1,17})\.([0-9a-f-]{36})(?:\.([0-9a-f]{12}))?$/.exec(
    Buffer.from(cursor, 'base64url').toString('utf8'),
  );
  if (!m || !UUID.test(m[2]) || m[3] !== (list === undefined ? undefined : listTag(list))) {
    throw new AppError('VALIDATION_FAILED', 'The cursor is not one this service issued', {
      details: [{ path: 'query/cursor', message: 'must be a nextCursor returned by this list' }],
    });
  }
  return { us: Number(m[1]), id: m[2] };
}

/** SQL for a timestamptz column as the cursor's microseconds. */
export const usSql = (column: string) => `(extract(epoch from ${column}) * 1000000)::bigint`;

/** SQL condition "(column, idColumn) is older than the cursor"; bindings: us, id. */
export const olderThanSql = (column: string, idColumn: string) =>
  `(${column}, ${idColumn}) < (timestamptz 'epoch' + ? * interval '1 microsecond', ?::uuid)`;

/** The same cursors under the names the inbox, lists and notifications use. */
export type TimeIdCursor = KeysetPosition;
export const encodeCursor = encodeKeyset;

/** A cursor, or null when it is not one this service issued (the caller answers the 400). */
export function decodeCursor(s: string): TimeIdCursor | null {
  try {
    return decodeKeyset(s);
  } catch {
    return null;
  }
}

/** The query's `cursor`, decoded (absent: null); 400 VALIDATION_FAILED at query/cursor when it is not one. */
export function queryCursor(cursor: string | undefined, list?: string): TimeIdCursor | null {
  return cursor === undefined ? null : decodeKeyset(cursor, list);
}

export const usOf = usSql;

/** `olderThanSql` with its bindings. */
export function olderThan(
  tsColumn: string,
  idColumn: string,
  c: TimeIdCursor,
): { sql: string; bindings: [number, string] } {
  return { sql: olderThanSql(tsColumn, idColumn), bindings: [c.us, c.id] };
}

/** The page of `limit` rows out of `limit + 1` fetched, and the cursor to the next one (null: last page). */
export function pageOf<R extends { us: number | string; id: string }>(
  rows: R[],
  limit: number,
  list?: string,
): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    page,
    nextCursor: rows.length > limit && last ? encodeKeyset({ us: Number(last.us), id: last.id }, list) : null,
  };
}
