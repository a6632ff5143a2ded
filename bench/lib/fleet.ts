import { spawn, type ChildProcess } from 'child_process';
import path from 'path';
import type { Deps } from '../../src/deps';
import { RunProgress, runProgress, startRun } from '../../src/scoring/fleet';
import { readCpu, Reading } from './proc-cpu';

/** One partition job as a worker ran it (ms from the run's start). */
export interface JobTiming {
  worker: number;
  phase: string;
  part: number;
  start: number;
  end: number;
}

/** A phase of the run as the bench saw it (ms from the run's start): CPU milliseconds by process between its start and end. */
export interface PhaseStat {
  phase: string;
  start: number;
  end: number;
  /** by role: `worker 1`, `worker 2`, … (each process, its thread pool included), `pg` (the database's backends), `bench` */
  cpu: Map<string, number>;
  /** the machine's busy share over the phase (every process, other benches' too) */
  machineBusy: number;
}

interface FleetChild {
  child: ChildProcess;
  jobs: JobTiming[];
}

/** Starts `bench/lib/fleet-worker.ts` on `url` and resolves once it takes jobs; its JOB lines are collected. */
function spawnFleetWorker(url: string, worker: number): Promise<FleetChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fleet-worker.ts')], {
    env: { ...process.env, BENCH_DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const jobs: JobTiming[] = [];
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const line of lines) {
        if (line === 'READY') resolve({ child, jobs });
        else if (line.startsWith('JOB ')) jobs.push({ worker, ...JSON.parse(line.slice(4)) });
      }
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
 * CPU of the bench's processes, sampled: the given pids by name, the backends of `database` (`pg`)
 * and their parallel query workers (`pg parallel`), this process (`bench`). Each sample returns the CPU
 * milliseconds spent since the previous one by role; a process first seen counts all of its CPU
 * (it started since: a parallel worker, a new connection's backend), so sampling often catches
 * short-lived ones.
 */
export class CpuMeter {
  private prev = new Map<number, number>();
  private last: Reading<string>;

  constructor(
    private readonly database: string,
    private readonly pids: Map<number, string>,
  ) {
    this.last = this.read();
    for (const [pid, p] of this.last.procs) this.prev.set(pid, p.user + p.sys);
  }

  private read(): Reading<string> {
    return readCpu((pid, cmd) => {
      if (pid === process.pid) return 'bench';
      const named = this.pids.get(pid);
      if (named) return named;
      const parallel = /^postgres: [^:]+: parallel worker for PID (\d+)/.exec(cmd);
      if (parallel) return `parallel ${parallel[1]}`;
      // A backend's title is "postgres: <cluster>: <user> <database> <client> <state>".
      const backend = /^postgres: [^:]+: (\S+) (\S+) /.exec(cmd);
      return backend && backend[2] === this.database ? 'pg' : null;
    });
  }

  /** CPU ms by role since the previous sample, and the machine's busy share over that time. */
  sample(): { cpu: Map<string, number>; machineBusy: number } {
    const now = this.read();
    const cpu = new Map<string, number>();
    const next = new Map<number, number>();
    for (const [pid, p] of now.procs) {
      const total = p.user + p.sys;
      next.set(pid, total);
      let role = p.role;
      if (role.startsWith('parallel ')) {
        // A parallel query worker of one of the database's backends.
        if (now.procs.get(Number(role.slice(9)))?.role !== 'pg') continue;
        role = 'pg parallel';
      }
      cpu.set(role, (cpu.get(role) ?? 0) + total - (this.prev.get(pid) ?? 0));
    }
    const busy = 1 - (now.idle - this.last.idle) / Math.max(1, now.total - this.last.total);
    this.prev = next;
    this.last = now;
    return { cpu, machineBusy: busy };
  }
}

/** Sums of samples: CPU ms by role and the machine's busy share weighted by wall time. */
export function addCpu(into: Map<string, number>, cpu: Map<string, number>): void {
  for (const [role, ms] of cpu) into.set(role, (into.get(role) ?? 0) + ms);
}

/**
 * A full recompute spread over `workers` worker processes (each running one partition at a
 * time): they are started first, then the run; `ms` runs from the start of the run to its
 * publication. `deps` is the caller's (its clock dates the run; its database is `url`'s).
 * Also returns each phase's wall time and CPU by process (the run's phase read every 50 ms) and
 * when each job ran.
 */
export async function runFleetFull(
  deps: Deps,
  opts: { url: string; workers: number; onProgress?: (p: RunProgress) => void },
): Promise<{ ms: number; progress: RunProgress; phases: PhaseStat[]; jobs: JobTiming[] }> {
  const children = await Promise.all(Array.from({ length: opts.workers }, (_, k) => spawnFleetWorker(opts.url, k + 1)));
  const meter = new CpuMeter(
    new URL(opts.url).pathname.slice(1),
    new Map(children.map((c, k) => [c.child.pid!, `worker ${k + 1}`])),
  );
  const t0 = Date.now();
  let result: { ms: number; progress: RunProgress; phases: PhaseStat[] };
  try {
    const { id, started } = await startRun(deps, { fleet: true });
    if (!started) throw new Error(`scoring run ${id} is still unfinished`);
    const phases: PhaseStat[] = [];
    let at: PhaseStat = { phase: 'facts', start: 0, end: 0, cpu: new Map(), machineBusy: 0 };
    let last = -1;
    for (;;) {
      const p = await runProgress(deps.db, id);
      const t = Date.now() - t0;
      // CPU every 200 ms (reading /proc costs the bench a few ms) and at each phase's end.
      if (p.phase !== at.phase || p.finished || t - at.end >= 200) {
        const { cpu, machineBusy } = meter.sample();
        addCpu(at.cpu, cpu);
        at.machineBusy += machineBusy * (t - at.end);
        at.end = t;
      }
      if (p.phase !== at.phase) {
        phases.push({ ...at, machineBusy: at.machineBusy / Math.max(1, at.end - at.start) });
        at = { phase: p.phase, start: t, end: t, cpu: new Map(), machineBusy: 0 };
      }
      if (p.done !== last) opts.onProgress?.(p);
      last = p.done;
      if (p.finished) {
        if (p.phase !== 'done') throw new Error(`scoring run ${id} was abandoned`);
        result = { ms: Date.now() - t0, progress: p, phases };
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await Promise.all(children.map((c) => stop(c.child)));
  }
  // Read once the workers exited: a job's line follows its commit.
  const jobs = children.flatMap((c) => c.jobs).map((j) => ({ ...j, start: j.start - t0, end: j.end - t0 }));
  return { ...result, jobs: jobs.sort((a, b) => a.start - b.start) };
}
