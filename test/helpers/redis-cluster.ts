import { spawn, spawnSync, type ChildProcess } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import Redis from 'ioredis';

/**
 * A real Redis Cluster of three masters (no replicas) on free local ports, in a temporary
 * directory: each test run makes its own and removes it (no fixed ports, so parallel runs and a
 * re-run after a crash never meet an old one). `cluster-require-full-coverage no`, as the
 * operations guide asks: a stopped master takes only its own slots down.
 */
export interface RedisClusterHandle {
  nodes: { host: string; port: number }[];
  /** Stops master i (SIGKILL: a crash, not a clean shutdown). */
  stopNode(i: number): Promise<void>;
  /** Starts master i again with its nodes.conf: it rejoins with the same slots. */
  startNode(i: number): Promise<void>;
  /** Waits until every node sees every master up and the cluster state ok. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** The index of the master serving `key`'s slot. */
  masterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

/** redis-server / redis-cli from PATH or the usual install directories. */
export function redisBinary(name: 'redis-server' | 'redis-cli'): string {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/local/bin', '/opt/homebrew/bin'];
  for (const d of dirs) {
    const p = path.join(d, name);
    if (d && fs.existsSync(p)) return p;
  }
  throw new Error(`${name} not found (install redis-server / redis-tools)`);
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Ports p with p + 10000 (the cluster bus) free as well. */
async function clusterPorts(n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const p = 20000 + Math.floor(Math.random() * 25000);
    if (out.includes(p)) continue;
    if ((await portFree(p)) && (await portFree(p + 10000))) out.push(p);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A one-shot client to one node: no retries, errors only through its commands. */
function probeClient(port: number): Redis {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  r.on('error', () => {});
  return r;
}

async function untilAnswers(port: number, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = probeClient(port);
    try {
      await r.connect();
      await r.ping();
      return;
    } catch (e) {
      if (Date.now() > until) throw e;
      await sleep(50);
    } finally {
      r.disconnect();
    }
  }
}

async function clusterInfo(port: number): Promise<{ state: string; nodesLine: string }> {
  const r = probeClient(port);
  try {
    await r.connect();
    const info = (await r.call('CLUSTER', 'INFO')) as string;
    const nodes = (await r.call('CLUSTER', 'NODES')) as string;
    return { state: /cluster_state:(\w+)/.exec(info)?.[1] ?? '', nodesLine: nodes };
  } finally {
    r.disconnect();
  }
}

export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const server = redisBinary('redis-server');
  const cli = redisBinary('redis-cli');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-redis-cluster-'));
  const ports = await clusterPorts(3);
  const procs: (ChildProcess | undefined)[] = [];

  const startNode = async (i: number) => {
    const port = ports[i];
    // prettier-ignore
    const args = [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
      '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
      '--cluster-node-timeout', '1000', '--cluster-require-full-coverage', 'no',
      '--save', '', '--appendonly', 'no', '--logfile', path.join(dir, `${port}.log`),
    ];
    procs[i] = spawn(server, args, { stdio: 'ignore' });
    await untilAnswers(port);
  };
  const stopNode = async (i: number) => {
    const p = procs[i];
    procs[i] = undefined;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  };
  const waitHealthy = async (timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        const infos = await Promise.all(ports.map((p) => clusterInfo(p)));
        const good = infos.every(
          (x) =>
            x.state === 'ok' &&
            x.nodesLine
              .trim()
              .split('\n')
              .filter((l) => l.includes('master') && !/fail|handshake|noaddr/.test(l.split(' ')[2])).length === 3,
        );
        if (good) return;
      } catch {
        // a node still starting
      }
      if (Date.now() > until) throw new Error('Redis Cluster did not become healthy');
      await sleep(100);
    }
  };
  const stop = async () => {
    await Promise.all(ports.map((_, i) => stopNode(i)));
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (let i = 0; i < ports.length; i++) await startNode(i);
    const created = spawnSync(cli, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await waitHealthy();
  } catch (e) {
    await stop();
    throw e;
  }

  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    stopNode,
    startNode,
    waitHealthy,
    async masterOf(key: string) {
      const r = new Redis({ port: ports[0], host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
      r.on('error', () => {});
      try {
        await r.connect();
        const slot = Number(await r.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await r.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        const owner = ranges.find(([a, b]) => slot >= a && slot <= b);
        if (!owner) throw new Error(`no master serves slot ${slot}`);
        return ports.indexOf(Number(owner[2][1]));
      } finally {
        r.disconnect();
      }
    },
    stop,
  };
}

let shared: Promise<RedisClusterHandle> | null = null;

/** One cluster for the whole mocha run (the limiter suites run against it); removed by closeSharedRedisCluster. */
export function sharedRedisCluster(): Promise<RedisClusterHandle> {
  shared ??= startRedisCluster();
  return shared;
}

export async function closeSharedRedisCluster(): Promise<void> {
  if (!shared) return;
  const c = await shared.catch(() => null);
  shared = null;
  await c?.stop();
}
