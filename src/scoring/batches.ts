import { EdgeBatch } from './weights';
import { SCHEDULE } from './policy';
import type { Facts } from './stage-sql';

/** Pool batches; rows of one brigade group (target object, direction) stay contiguous in one batch. */
export function buildBatches(
  f: Facts,
  n: number,
): { order: Int32Array; batches: { from: number; batch: EdgeBatch }[] } {
  let G = 0;
  for (let r = 0; r < n; r++) if (f.grp[r] >= G) G = f.grp[r] + 1;
  // Counting sort by group: non-votes (-1) first, then each group contiguous.
  const starts = new Int32Array(G + 2);
  for (let r = 0; r < n; r++) starts[f.grp[r] + 2]++;
  for (let g = 1; g <= G + 1; g++) starts[g] += starts[g - 1];
  const order = new Int32Array(n);
  for (let r = 0; r < n; r++) order[starts[f.grp[r] + 1]++] = r;

  const batches: { from: number; batch: EdgeBatch }[] = [];
  let from = 0;
  while (from < n) {
    let to = Math.min(n, from + SCHEDULE.poolChunk);
    while (to < n && f.grp[order[to]] >= 0 && f.grp[order[to]] === f.grp[order[to - 1]]) to++;
    const m = to - from;
    const b: EdgeBatch = {
      kind: new Uint8Array(m),
      flags: new Int32Array(m),
      pairK: new Int32Array(m),
      verified: new Uint8Array(m),
      ageDays: new Float32Array(m),
      extOwners: new Int32Array(m),
      group: new Int32Array(m),
      t: new Float64Array(m),
    };
    for (let k = 0; k < m; k++) {
      const r = order[from + k];
      b.kind[k] = f.kind[r];
      b.flags[k] = f.flags[r];
      b.pairK[k] = f.pk[r];
      b.verified[k] = f.verified[r];
      b.ageDays[k] = f.age[r];
      b.extOwners[k] = f.ext[r];
      b.group[k] = f.grp[r];
      b.t[k] = f.t[r];
    }
    batches.push({ from, batch: b });
    from = to;
  }
  return { order, batches };
}
