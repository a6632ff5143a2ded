import { spawn, type ChildProcess } from 'child_process';
import path from 'path';

/**
 * Starts `bench/lib/feed-server.ts` of a tree (this one by default) in its own process, so the
 * load generator never shares the server's event loop, and resolves once it prints `PORT <n>`.
 */
export function spawnFeedServer(opts: {
  url: string;
  mode: string;
  extra?: string[];
  /** Another checkout's root, for A/B runs: its own server code, run from its own folder. */
  tree?: string;
  /** Node flags before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
}): Promise<{ child: ChildProcess; port: number }> {
  const tree = opts.tree ?? path.join(__dirname, '..', '..');
  const child = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      '--import',
      'tsx',
      path.join(tree, 'bench', 'lib', 'feed-server.ts'),
      opts.mode,
      ...(opts.extra ?? []),
    ],
    { cwd: tree, env: { ...process.env, BENCH_DATABASE_URL: opts.url }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`${opts.mode} server of ${tree} exited with ${code}`)));
  });
}
