import type { Knex } from 'knex';
import type { PoolClient } from 'pg';
import { Readable, Writable } from 'stream';
import { pipeline } from 'stream/promises';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

/**
 * Binary COPY for scoring batches. A million fact rows parsed as text rows by node-pg costs
 * seconds; the binary COPY format moves them as fixed-width fields parsed straight into typed
 * arrays (and weights back the same way).
 */

export type ColType = 'int2' | 'int4' | 'int8' | 'float4' | 'float8' | 'bool';
type ColArray = Int16Array | Int32Array | Float64Array | Float32Array | Uint8Array;
export type Columns<T extends Record<string, ColType>> = {
  [K in keyof T]: T[K] extends 'int2'
    ? Int16Array
    : T[K] extends 'int4'
      ? Int32Array
      : T[K] extends 'float4'
        ? Float32Array
        : T[K] extends 'bool'
          ? Uint8Array
          : Float64Array;
};

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

async function connectionOf(trx: Knex.Transaction): Promise<PoolClient> {
  // Inside a knex transaction this is the transaction's own connection (release is a no-op).
  // any: knex does not type its client's acquireConnection, the only way to its pg connection.
  return (trx as any).client.acquireConnection();
}

function alloc(t: ColType, n: number): ColArray {
  switch (t) {
    case 'int2':
      return new Int16Array(n);
    case 'int4':
      return new Int32Array(n);
    case 'float4':
      return new Float32Array(n);
    case 'bool':
      return new Uint8Array(n);
    default:
      return new Float64Array(n);
  }
}

/**
 * Runs `select` (which must yield exactly the columns of `cols`, in order and of those types;
 * int8 arrives as float64, exact below 2^53) and returns one typed array per column. NULL is 0.
 * Rows are parsed as the stream arrives, so parsing overlaps with the server producing them and
 * the whole result is never held as one buffer.
 */
export async function copyOut<T extends Record<string, ColType>>(
  trx: Knex.Transaction,
  select: string,
  cols: T,
): Promise<{ n: number; cols: Columns<T> }> {
  const conn = await connectionOf(trx);
  const names = Object.keys(cols);
  const types = names.map((k) => cols[k]);
  // Grown by doubling; trimmed with subarray at the end.
  let cap = 1024;
  let arrays = types.map((t) => alloc(t, cap));
  let n = 0;
  let headerDone = false;
  let ended = false;
  // Bytes of an incomplete row (or header) carried over to the next chunk.
  let carry: Buffer | null = null;

  /** Parses every complete row of `buf`; returns where the first incomplete one starts. */
  function parse(buf: Buffer): number {
    let p = 0;
    if (!headerDone) {
      if (buf.length < 19) return 0;
      if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new Error('copyOut: not a binary COPY stream');
      const ext = buf.readInt32BE(15);
      if (buf.length < 19 + ext) return 0;
      p = 19 + ext;
      headerDone = true;
    }
    while (!ended && p + 2 <= buf.length) {
      const fields = buf.readInt16BE(p);
      if (fields === -1) {
        ended = true;
        return buf.length;
      }
      if (fields !== types.length) throw new Error(`copyOut: expected ${types.length} columns, got ${fields}`);
      // Complete row? Walk the field lengths first.
      let q = p + 2;
      for (let c = 0; c < fields; c++) {
        if (q + 4 > buf.length) return p;
        const len = buf.readInt32BE(q);
        q += 4 + (len > 0 ? len : 0);
      }
      if (q > buf.length) return p;
      if (n === cap) {
        cap *= 2;
        arrays = arrays.map((a, i) => {
          const b = alloc(types[i], cap);
          // any: TypeScript cannot pair the union of typed arrays a and b, which alloc makes of one type.
          b.set(a as any);
          return b;
        });
      }
      p += 2;
      for (let c = 0; c < types.length; c++) {
        const len = buf.readInt32BE(p);
        p += 4;
        if (len < 0) continue;
        const a = arrays[c];
        switch (types[c]) {
          case 'int2':
            a[n] = buf.readInt16BE(p);
            break;
          case 'int4':
            a[n] = buf.readInt32BE(p);
            break;
          case 'int8':
            a[n] = buf.readInt32BE(p) * 4_294_967_296 + buf.readUInt32BE(p + 4);
            break;
          case 'float4':
            a[n] = buf.readFloatBE(p);
            break;
          case 'float8':
            a[n] = buf.readDoubleBE(p);
            break;
          case 'bool':
            a[n] = buf[p];
            break;
        }
        p += len;
      }
      n++;
    }
    return p;
  }

  await pipeline(
    conn.query(copyTo(`copy (${select}) to stdout with (format binary)`)),
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        try {
          const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
          const used = parse(buf);
          carry = used < buf.length ? Buffer.from(buf.subarray(used)) : null;
          cb();
        } catch (e) {
          cb(e as Error);
        }
      },
    }),
  );
  if (!headerDone) throw new Error('copyOut: not a binary COPY stream');
  if (!ended || carry) throw new Error('copyOut: truncated binary COPY stream');
  const out = {} as Record<string, ColArray>;
  names.forEach((k, i) => (out[k] = arrays[i].subarray(0, n)));
  return { n, cols: out as Columns<T> };
}

/** One column of a COPY FROM: an array per row, or an encoder writing row `i` (returns the bytes written). */
export type InColumn =
  | { type: 'int8' | 'int4' | 'int2' | 'float4'; values: ArrayLike<number> }
  | { type: 'bytes'; values: (i: number) => Buffer };

/** Streams `n` rows to `copy <target> from stdin (format binary)` in chunks of encoded rows. */
export async function copyIn(trx: Knex.Transaction, target: string, n: number, cols: InColumn[]): Promise<void> {
  const conn = await connectionOf(trx);
  const ROWS = 65_536;
  function* chunks(): Generator<Buffer> {
    const head = Buffer.alloc(19);
    SIGNATURE.copy(head, 0);
    yield head;
    for (let s = 0; s < n; s += ROWS) {
      const e = Math.min(n, s + ROWS);
      const parts: Buffer[] = [];
      let fixed = 0;
      for (const c of cols) fixed += c.type === 'int8' ? 12 : c.type === 'bytes' ? 4 : c.type === 'int2' ? 6 : 8;
      const fixedBuf = Buffer.alloc((e - s) * (2 + fixed));
      let p = 0;
      let flushed = 0;
      for (let r = s; r < e; r++) {
        fixedBuf.writeInt16BE(cols.length, p);
        p += 2;
        for (const c of cols) {
          if (c.type === 'int8') {
            // Two 32-bit halves (exact for |v| < 2^53): no BigInt per value.
            const v = c.values[r];
            const hi = Math.floor(v / 4_294_967_296);
            fixedBuf.writeInt32BE(8, p);
            fixedBuf.writeInt32BE(hi, p + 4);
            fixedBuf.writeUInt32BE(v - hi * 4_294_967_296, p + 8);
            p += 12;
          } else if (c.type === 'int4') {
            fixedBuf.writeInt32BE(4, p);
            fixedBuf.writeInt32BE(c.values[r], p + 4);
            p += 8;
          } else if (c.type === 'int2') {
            fixedBuf.writeInt32BE(2, p);
            fixedBuf.writeInt16BE(c.values[r], p + 4);
            p += 6;
          } else if (c.type === 'float4') {
            fixedBuf.writeInt32BE(4, p);
            fixedBuf.writeFloatBE(c.values[r], p + 4);
            p += 8;
          } else {
            // Variable-width field: flush the fixed part written so far, then the bytes.
            const v = (c.values as (i: number) => Buffer)(r);
            fixedBuf.writeInt32BE(v.length, p);
            p += 4;
            parts.push(fixedBuf.subarray(flushed, p), v);
            flushed = p;
          }
        }
      }
      parts.push(fixedBuf.subarray(flushed, p));
      yield Buffer.concat(parts);
    }
    const trailer = Buffer.alloc(2);
    trailer.writeInt16BE(-1, 0);
    yield trailer;
  }
  await pipeline(Readable.from(chunks()), conn.query(copyFrom(`copy ${target} from stdin with (format binary)`)));
}

/** Binary `text[]` value (one dimension, no NULLs), for COPY FROM. */
export function encodeTextArray(items: readonly string[]): Buffer {
  const els = items.map((s) => Buffer.from(s, 'utf8'));
  const out = Buffer.alloc(20 + els.reduce((m, e) => m + 4 + e.length, 0));
  out.writeInt32BE(1, 0); // dimensions
  out.writeInt32BE(0, 4); // no NULLs
  out.writeInt32BE(25, 8); // element type: text
  out.writeInt32BE(els.length, 12);
  out.writeInt32BE(1, 16); // lower bound
  let p = 20;
  for (const e of els) {
    out.writeInt32BE(e.length, p);
    e.copy(out, p + 4);
    p += 4 + e.length;
  }
  return out;
}

/** Escapes one field of COPY's text format. */
export function copyTextField(v: string): string {
  return v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** Streams rows (fields already escaped with copyTextField) to `copy <target> from stdin` in text format. */
export async function copyInText(trx: Knex.Transaction, target: string, rows: string[][]): Promise<void> {
  const conn = await connectionOf(trx);
  function* chunks(): Generator<string> {
    const CH = 5_000;
    for (let s = 0; s < rows.length; s += CH) {
      let out = '';
      for (let r = s; r < Math.min(rows.length, s + CH); r++) out += rows[r].join('\t') + '\n';
      yield out;
    }
  }
  await pipeline(Readable.from(chunks()), conn.query(copyFrom(`copy ${target} from stdin`)));
}
