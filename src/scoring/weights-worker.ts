import { computeBatch, EdgeBatch, EdgeResult } from './weights';
import Piscina from 'piscina';

/** piscina task: the pure batch function; results move back without a copy. */
export default function run(batch: EdgeBatch): EdgeResult {
  const r = computeBatch(batch);
  return Piscina.move({ weights: r.weights, masks: r.masks } as any) as unknown as EdgeResult;
}
