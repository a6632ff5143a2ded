import type { Knex } from 'knex';
import { maskToCodes } from './weights';
import { copyIn, encodeTextArray } from './copy';

/** PostgreSQL binary timestamptz: microseconds since 2000-01-01 UTC. */
const PG_EPOCH_MS = 946_684_800_000;

/** Weights as stored (real, rounded to 1e-6). */
export function storedWeights(weights: Float32Array): Float32Array {
  const out = new Float32Array(weights.length);
  for (let r = 0; r < weights.length; r++) out[r] = Math.round(weights[r] * 1e6) / 1e6;
  return out;
}

/** Reason codes of a mask, with `extra` (a v2 code) appended in place of NORMAL. */
export function reasonsWith(mask: number, extra?: string): string[] {
  if (!extra) return maskToCodes(mask);
  return [...maskToCodes(mask).filter((c) => c !== 'NORMAL'), extra];
}

/**
 * Streams (id, weight, reasons, computed_at) rows to `target`, with each row's vote value when
 * `values` are given (v1's edges: what an incremental run's kept reputation inputs counted it as);
 * `extra` adds a code to every row's reasons.
 */
export async function copyEdges(
  trx: Knex.Transaction,
  target: string,
  ids: Float64Array,
  rounded: Float32Array,
  masks: Int32Array,
  now: Date,
  opts: { extra?: string; values?: ArrayLike<number> } = {},
): Promise<void> {
  const { extra, values } = opts;
  const encoded = new Map<number, Buffer>();
  const reasons = (r: number) => {
    let b = encoded.get(masks[r]);
    if (!b) encoded.set(masks[r], (b = encodeTextArray(reasonsWith(masks[r], extra))));
    return b;
  };
  const at = (now.getTime() - PG_EPOCH_MS) * 1000;
  await copyIn(trx, `${target} (interaction_id, weight, reasons, computed_at${values ? ', value' : ''})`, ids.length, [
    { type: 'int8', values: ids },
    { type: 'float4', values: rounded },
    { type: 'bytes', values: reasons },
    { type: 'int8', values: new Float64Array(ids.length).fill(at) },
    ...(values ? [{ type: 'int2' as const, values }] : []),
  ]);
}
