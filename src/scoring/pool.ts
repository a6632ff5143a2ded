import fs from 'fs';
import path from 'path';
import Piscina from 'piscina';
import { computeBatch, EdgeBatch, EdgeResult } from './weights';

/**
 * The scoring thread pool (piscina 5). Compiled runs load dist/src/scoring/weights-worker.js;
 * under tsx a small .js bootstrap registers tsx inside each thread. Both run `computeBatch`.
 */
let pool: Piscina | null = null;
let poolSize = 2;

function workerFile(): string {
  const compiled = path.join(__dirname, 'weights-worker.js');
  if (__filename.endsWith('.js') && fs.existsSync(compiled)) return compiled;
  return path.join(__dirname, 'weights-worker-boot.js');
}

export function configureScoringPool(size: number): void {
  poolSize = Math.max(1, size);
}

export function scoringPool(): Piscina {
  pool ??= new Piscina({
    filename: workerFile(),
    minThreads: 1,
    maxThreads: poolSize,
    idleTimeout: 30_000,
    atomics: 'disabled',
  });
  return pool;
}

/** Runs one batch on the pool; tiny batches stay inline where a thread hop costs more than the work. */
export async function runBatch(batch: EdgeBatch, inlineBelow = 2_000): Promise<EdgeResult> {
  if (batch.kind.length < inlineBelow) return computeBatch(batch);
  // Moved, not copied; the caller keeps `group` and `t` for brigade flags.
  const transfer = [
    batch.kind.buffer,
    batch.flags.buffer,
    batch.pairK.buffer,
    batch.verified.buffer,
    batch.ageDays.buffer,
    batch.extOwners.buffer,
  ];
  const n = batch.kind.length;
  const out: Uint8Array = await scoringPool().run(batch, { transferList: transfer as any });
  return {
    weights: new Float32Array(out.buffer, out.byteOffset, n),
    masks: new Int32Array(out.buffer, out.byteOffset + n * 4, n),
  };
}

/** Shutdown hook of the worker process. */
export async function destroyScoringPool(): Promise<void> {
  const p = pool;
  pool = null;
  if (p) await p.destroy();
}
