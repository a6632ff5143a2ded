import { execFile, execFileSync } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import { promisify } from 'util';
import knexFactory from 'knex';

/**
 * A private PostgreSQL primary and a streaming read replica made from it with
 * `pg_basebackup -R`, each on a free local port under one temporary directory (never the
 * machine's shared server: it is stopped and restarted on purpose). Removed by destroy().
 */
export interface PgReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** pg_wal_replay_pause / resume on the replica: it receives WAL but shows nothing new. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  destroy(): Promise<void>;
}

/** The directory of initdb, pg_ctl and pg_basebackup: PG_BIN, pg_config --bindir, or the newest /usr/lib/postgresql/N/bin. */
export function pgBinDir(): string {
  const has = (d: string) => fs.existsSync(path.join(d, 'pg_ctl')) && fs.existsSync(path.join(d, 'initdb'));
  if (process.env.PG_BIN && has(process.env.PG_BIN)) return process.env.PG_BIN;
  try {
    const d = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (has(d)) return d;
  } catch {
    // no pg_config on PATH
  }
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => has(path.join(root, v, 'bin')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length) return path.join(root, versions[0], 'bin');
  throw new Error('PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) not found: set PG_BIN');
}

const root = process.getuid?.() === 0;
/** PostgreSQL refuses to run as root: as root, the postgres system user runs it. */
const run = (bin: string, cmd: string, args: string[]) =>
  root
    ? promisify(execFile)('runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args], { timeout: 60_000 })
    : promisify(execFile)(path.join(bin, cmd), args, { timeout: 60_000 });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export async function startPgReplicaPair(): Promise<PgReplicaPair> {
  const bin = pgBinDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-replica-'));
  if (root) execFileSync('chown', ['postgres:postgres', dir]);
  const [pp, rp] = [await freePort(), await freePort()];
  const primaryData = path.join(dir, 'primary');
  const replicaData = path.join(dir, 'replica');
  const opts = (port: number) =>
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const start = (data: string, port: number, log: string) =>
    run(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, log), '-w', '-t', '30', '-o', opts(port), 'start']);
  const stop = (data: string) => run(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']);
  const onReplica = async (sql: string) => {
    const k = knexFactory({
      client: 'pg',
      connection: `postgres://postgres@127.0.0.1:${rp}/postgres`,
      pool: { min: 0, max: 1 },
    });
    try {
      await k.raw(sql);
    } finally {
      await k.destroy();
    }
  };
  let primaryUp = false;
  let replicaUp = false;
  const destroy = async () => {
    if (replicaUp) await stop(replicaData).catch(() => undefined);
    if (primaryUp) await stop(primaryData).catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // initdb's pg_hba trusts local and 127.0.0.1 replication connections; wal_level replica is the default.
    await run(bin, 'initdb', ['-D', primaryData, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await start(primaryData, pp, 'primary.log');
    primaryUp = true;
    const admin = knexFactory({
      client: 'pg',
      connection: `postgres://postgres@127.0.0.1:${pp}/postgres`,
      pool: { min: 0, max: 1 },
    });
    await admin.raw('create database svc');
    await admin.destroy();
    // prettier-ignore
    await run(bin, 'pg_basebackup', ['-h', '127.0.0.1', '-p', String(pp), '-U', 'postgres', '-D', replicaData, '-R', '-X', 'stream', '-c', 'fast', '--no-sync']);
    await start(replicaData, rp, 'replica.log');
    replicaUp = true;
  } catch (e) {
    await destroy();
    throw e;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${pp}/svc`,
    replicaUrl: `postgres://postgres@127.0.0.1:${rp}/svc`,
    async stopReplica() {
      await stop(replicaData);
      replicaUp = false;
    },
    async startReplica() {
      await start(replicaData, rp, 'replica.log');
      replicaUp = true;
    },
    pauseReplay: () => onReplica('select pg_wal_replay_pause()'),
    resumeReplay: () => onReplica('select pg_wal_replay_resume()'),
    destroy,
  };
}
