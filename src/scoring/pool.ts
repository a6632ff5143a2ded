import fs from 'fs';
import path from 'path';
import type Piscina from 'piscina';
import { computeBatch, EdgeBatch, EdgeResult } from './weights';

function workerFile(): string {
  const compiled = path.join(__dirname, 'weights-worker.js');
  if (__filename.endsWith('.js') && fs.existsSync(compiled)) return compiled;
  return path.join(__dirname, 'weights-worker-boot.js');
}

/**
 * The scoring thread pool (piscina 5), one per process, built by the composition root and
 * reached through `deps.scoringPool`; its threads start on the first batch big enough to need
 * them, so processes that never score (web, CLI reads) never start one. Compiled runs load
 * dist/src/scoring/weights-worker.js; under tsx a small .js bootstrap registers tsx inside each
 * thread. Both run `computeBatch`.
 */
export class ScoringPool {
  private pool: Piscina | null = null;
  private readonly size: number;

  constructor(size: number) {
    this.size = Math.max(1, size);
  }

  /** Runs one batch on the pool; tiny batches stay inline where a thread hop costs more than the work. */
  async run(batch: EdgeBatch, inlineBelow = 2_000): Promise<EdgeResult> {
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
    // piscina itself is loaded with the first batch that needs threads.
    // (its module.exports is the class itself)
    const Pool = require('piscina') as typeof Piscina;
    this.pool ??= new Pool({
      filename: workerFile(),
      minThreads: 1,
      maxThreads: this.size,
      idleTimeout: 30_000,
      atomics: 'disabled',
    });
    const out: Uint8Array = await this.pool.run(batch, { transferList: transfer as ArrayBuffer[] });
    return {
      weights: new Float32Array(out.buffer, out.byteOffset, n),
      masks: new Int32Array(out.buffer, out.byteOffset + n * 4, n),
    };
  }

  /** Shutdown: ends the threads (a later batch starts them again). */
  async destroy(): Promise<void> {
    const p = this.pool;
    this.pool = null;
    if (p) await p.destroy();
  }
}
