import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import type { Deps } from '../../src/deps';
import { RunProgress, runProgress, startRun } from '../../src/scoring/fleet';

/** Starts `bench/lib/fleet-worker.ts` on `url` and resolves once it takes jobs. */
function spawnFleetWorker(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fleet-worker.ts')], {
    env: { ...process.env, BENCH_DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('READY')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`fleet worker exited with ${code}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

/**
 * A full recompute spread over `workers` worker processes (each running one partition at a
 * time): they are started first, then the run; `ms` runs from the start of the run to its
 * publication. `deps` is the caller's (its clock dates the run; its database is `url`'s).
 */
export async function runFleetFull(
  deps: Deps,
  opts: { url: string; workers: number; onProgress?: (p: RunProgress) => void },
): Promise<{ ms: number; progress: RunProgress }> {
  const children = await Promise.all(Array.from({ length: opts.workers }, () => spawnFleetWorker(opts.url)));
  try {
    const t0 = Date.now();
    const { id, started } = await startRun(deps, { fleet: true });
    if (!started) throw new Error(`scoring run ${id} is still unfinished`);
    let last = -1;
    for (;;) {
      const p = await runProgress(deps.db, id);
      if (p.done !== last) opts.onProgress?.(p);
      last = p.done;
      if (p.finished) {
        if (p.phase !== 'done') throw new Error(`scoring run ${id} was abandoned`);
        return { ms: Date.now() - t0, progress: p };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await Promise.all(children.map(stop));
  }
}
