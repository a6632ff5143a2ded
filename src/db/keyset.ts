import { AppError } from '../http/errors';

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

export function encodeKeyset(p: KeysetPosition): string {
  return Buffer.from(`${p.us}.${p.id}`, 'utf8').toString('base64url');
}

/** 400 VALIDATION_FAILED at query/cursor for anything this service did not issue. */
export function decodeKeyset(cursor: string): KeysetPosition {
  const m = /^(\d{1,17})\.([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || !UUID.test(m[2])) {
    throw new AppError(400, 'VALIDATION_FAILED', 'The cursor is not one this service issued', {
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
