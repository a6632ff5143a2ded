import http from 'http';
import type { Runner } from 'graphile-worker';
import { Config, ConfigError, loadConfig } from './config';
import { createLogger, Logger } from './log';
import { createDb } from './db/knex';
import { migrateAll } from './db/migrate';
import { startEmbeddedPostgres, EmbeddedDb } from './db/embedded';
import { createLimiter } from './limits';
import { createApp } from './app';
import type { Deps } from './deps';
import { webRouters } from './web';
import { startWorker } from './worker-runner';

export interface BootOptions {
  web: boolean;
  worker: boolean;
  migrate: boolean;
  /** Dev launcher only: without DATABASE_URL, start an embedded PostgreSQL under .data/. */
  allowEmbedded?: boolean;
  /** CLI: without DATABASE_URL, connect to the embedded PostgreSQL that `npm start` runs. */
  useDevDatabase?: boolean;
}

export interface Booted {
  config: Config;
  log: Logger;
  deps: Deps;
  server?: http.Server;
  runner?: Runner;
  stop(): Promise<void>;
}

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`configuration error: ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
}

/** Composition root shared by web, worker, release and the dev launcher. */
export async function boot(opts: BootOptions): Promise<Booted> {
  const config = readConfig();
  const log = createLogger(config.logLevel);
  let embedded: EmbeddedDb | undefined;
  let connectionString = config.databaseUrl;
  if (!connectionString && opts.useDevDatabase && config.nodeEnv !== 'production') {
    connectionString = `postgres://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/svc`;
  }
  if (!connectionString) {
    if (!opts.allowEmbedded) {
      console.error('configuration error: DATABASE_URL is required (npm start uses an embedded PostgreSQL without it)');
      process.exit(1);
    }
    embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort, log);
    connectionString = embedded.connectionString;
  }
  const db = createDb(connectionString, config.dbPoolMax);
  if (opts.migrate) {
    await migrateAll(db, connectionString);
    log.info('migrations applied');
  }
  const limiter = createLimiter(config, log);
  const deps: Deps = { config, log, db, limiter, now: () => new Date() };

  let server: http.Server | undefined;
  if (opts.web) {
    const app = createApp(deps, { extraRouters: webRouters(deps) });
    server = http.createServer(app.callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => server!.listen(config.port, config.host, resolve));
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    log.info({ url: config.publicUrl, port }, `svc web listening on http://localhost:${port} (public URL ${config.publicUrl})`);
  }
  let runner: Runner | undefined;
  if (opts.worker) {
    runner = await startWorker(deps, connectionString);
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down');
      if (server) await new Promise<void>((r) => server!.close(() => r()));
      if (runner) await runner.stop();
      await limiter.close();
      await db.destroy();
      if (embedded) await embedded.stop();
    })());
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      stop().then(
        () => process.exit(0),
        (e) => {
          log.error({ err: e }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
  return { config, log, deps, server, runner, stop };
}
