/**
 * CPU time by role (web server, worker, PostgreSQL, Redis, ...) from /proc (Linux only), to see
 * which process a workload's CPU goes to. A reading maps each live process of a known role to its
 * user and system CPU milliseconds so far; `spent` turns two readings into CPU per role.
 */
import fs from 'fs';

export type Classify<R extends string> = (pid: number, cmdline: string) => R | null;

export type Reading<R extends string> = {
  idle: number;
  total: number;
  procs: Map<number, { role: R; user: number; sys: number }>;
};

/** USER_HZ: /proc reports CPU in ticks of 10 ms. */
const TICK_MS = 10;

export const procAvailable = fs.existsSync('/proc/stat');

/** Machine-wide idle and total ticks (first line of /proc/stat). */
function machine(): { idle: number; total: number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3] + f[4], total: f.reduce((a, b) => a + b, 0) };
}

export function readCpu<R extends string>(classify: Classify<R>): Reading<R> {
  const procs = new Map<number, { role: R; user: number; sys: number }>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const role = classify(Number(d), fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' '));
      if (!role) continue;
      const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(d), { role, user: Number(f[11]) * TICK_MS, sys: Number(f[12]) * TICK_MS });
    } catch {
      // The process ended meanwhile.
    }
  }
  return { ...machine(), procs };
}

/**
 * CPU milliseconds per role between two readings, and the machine's idle share. Processes in both
 * count their difference, new ones (a PostgreSQL backend of a new pooled connection) all of theirs;
 * one that ended in between is missed.
 */
export function spent<R extends string>(
  a: Reading<R>,
  b: Reading<R>,
): { byRole: Map<R, { user: number; sys: number }>; idleShare: number } {
  const byRole = new Map<R, { user: number; sys: number }>();
  for (const [pid, p] of b.procs) {
    const before = a.procs.get(pid);
    const r = byRole.get(p.role) ?? { user: 0, sys: 0 };
    r.user += p.user - (before?.user ?? 0);
    r.sys += p.sys - (before?.sys ?? 0);
    byRole.set(p.role, r);
  }
  return { byRole, idleShare: (b.idle - a.idle) / Math.max(1, b.total - a.total) };
}

/** The roles of a bench run of svc on one machine. */
export type SvcRole = 'web' | 'worker' | 'pg' | 'pgWorker' | 'redis' | 'bare' | 'bench';

/**
 * The processes of one bench run: the children it started (by pid, so another svc server on the
 * machine, say a second checkout's, is not counted), the PostgreSQL backends of its own database
 * and PostgreSQL's shared background processes (the WAL writer works for every write), Redis, and
 * the bench process itself.
 */
export function svcClassifier(run: {
  web: () => number[];
  worker: () => number[];
  bare: () => number[];
  database: string;
  /** Backends known to serve the worker (`pgWorker`, still counted in PostgreSQL's total by the benches). */
  workerBackends?: () => ReadonlySet<number>;
}): Classify<SvcRole> {
  return (pid, cmd) => {
    if (pid === process.pid) return 'bench';
    if (run.web().includes(pid)) return 'web';
    if (run.worker().includes(pid)) return 'worker';
    if (run.bare().includes(pid)) return 'bare';
    if (cmd.startsWith('redis-server')) return 'redis';
    if (!cmd.startsWith('postgres')) return null;
    // A backend's title is "postgres: <cluster>: <user> <database> <client> <state>".
    const backend = /^postgres: [^:]+: (\S+) (\S+) /.exec(cmd);
    if (backend && backend[2] !== run.database) return null;
    return run.workerBackends?.().has(pid) ? 'pgWorker' : 'pg';
  };
}
