import { ChildProcess, execFile, execFileSync, spawn } from 'child_process';
import { promisify } from 'util';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import knexFactory, { Knex } from 'knex';

/**
 * Private PostgreSQL and Redis instances for fault tests: they are stopped and restarted on
 * purpose, so they must never be the machine's shared servers on 5432/6379.
 */
const PG_BIN = process.env.FAULT_PG_BIN || '/usr/lib/postgresql/15/bin';
const REPO = path.resolve(__dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

// Asynchronous, so the load generators of the test keep running while the server restarts.
const asPostgres = (cmd: string, args: string[]) =>
  promisify(execFile)('runuser', ['-u', 'postgres', '--', path.join(PG_BIN, cmd), ...args], { timeout: 60_000 });

export class PrivatePostgres {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fault-pg-'));
  constructor(readonly port: number) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/svc`;
  }

  async init(): Promise<void> {
    execFileSync('chown', ['postgres:postgres', this.dir]);
    await asPostgres('initdb', ['-D', path.join(this.dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await this.start();
  }

  async start(): Promise<void> {
    await asPostgres('pg_ctl', [
      '-D',
      path.join(this.dir, 'data'),
      '-l',
      path.join(this.dir, 'log'),
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`,
      'start',
    ]);
  }

  async stop(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', path.join(this.dir, 'data'), '-m', 'fast', '-w', '-t', '30', 'stop']);
  }

  async restart(): Promise<void> {
    await asPostgres('pg_ctl', [
      '-D',
      path.join(this.dir, 'data'),
      '-l',
      path.join(this.dir, 'log'),
      '-m',
      'fast',
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      'restart',
    ]);
  }

  async createDatabase(): Promise<void> {
    const admin = knexFactory({
      client: 'pg',
      connection: `postgres://postgres@127.0.0.1:${this.port}/postgres`,
      pool: { min: 0, max: 1 },
    });
    await admin.raw('create database svc');
    await admin.destroy();
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined); // already stopped
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export class PrivateRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if (await canConnect(this.port)) return;
      await sleep(50);
    }
    throw new Error('private redis did not start');
  }

  /** SIGKILL: the closest thing to a crashed or partitioned cache. */
  async kill(): Promise<void> {
    const c = this.child;
    this.child = null;
    if (!c || c.exitCode !== null) return;
    const done = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await done;
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A private PostgreSQL cluster with its database and a private Redis, each on a free port. */
export async function startPrivateServices(): Promise<{ pg: PrivatePostgres; redis: PrivateRedis }> {
  const pg = new PrivatePostgres(await freePort());
  await pg.init();
  await pg.createDatabase();
  const redis = new PrivateRedis(await freePort());
  await redis.start();
  return { pg, redis };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function faultEnv(pg: PrivatePostgres, redis: PrivateRedis, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SESSION_SECRET: 'fault-session-secret-0123456789abcdef0123',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: process.env.FAULT_LOG_LEVEL || 'silent',
    WORKER_CONCURRENCY: '4',
  };
}

/** Runs an entry point of src/ through tsx, as its own process (the real server, worker or release). */
export function spawnEntry(entry: 'server' | 'worker' | 'release', env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(REPO, 'src', `${entry}.ts`)], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  const keep = (b: Buffer) => {
    tail.push(b.toString());
    if (tail.length > 50) tail.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  (child as any).outputTail = tail;
  return child;
}

export function outputOf(child: ChildProcess): string {
  return ((child as any).outputTail ?? []).join('');
}

export async function runToEnd(child: ChildProcess, timeoutMs = 60_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`process did not exit in ${timeoutMs} ms: ${outputOf(child)}`)),
      timeoutMs,
    );
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code ?? -1);
    });
  });
}

export async function waitHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.status < 500) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} not up in ${timeoutMs} ms`);
}

export async function stopChild(
  child: ChildProcess | null | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), 5000);
  await done;
  clearTimeout(t);
}

export interface Timed {
  status: number;
  body: any;
  ms: number;
  startedAt: number;
  error?: string;
}

/** A request that never hangs the test: a client-side cap far above the 5 s promise. */
export async function timed(
  method: string,
  url: string,
  opts: { key?: string; body?: unknown; capMs?: number } = {},
): Promise<Timed> {
  const startedAt = Date.now();
  try {
    const r = await fetch(url, {
      method,
      headers: {
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
      },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      signal: AbortSignal.timeout(opts.capMs ?? 15_000),
    });
    const text = await r.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: r.status, body, ms: Date.now() - startedAt, startedAt };
  } catch (e) {
    return { status: 0, body: null, ms: Date.now() - startedAt, startedAt, error: (e as Error).message };
  }
}

export function openDb(url: string): Knex {
  return knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 4 } });
}
