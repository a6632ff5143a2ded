import Piscina from 'piscina';
import { computeBatch, EdgeBatch } from './weights';

/**
 * piscina task: the pure batch function. Weights and masks share one buffer (n float32 then
 * n int32) that moves back to the main thread without a copy.
 */
export default function run(batch: EdgeBatch): Uint8Array {
  const r = computeBatch(batch);
  const n = r.weights.length;
  const out = new Uint8Array(n * 8);
  new Float32Array(out.buffer, 0, n).set(r.weights);
  new Int32Array(out.buffer, n * 4, n).set(r.masks);
  return Piscina.move(out) as unknown as Uint8Array;
}
