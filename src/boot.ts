import { createQuery } from './db/query';
import http from 'http';
import type { Runner } from 'graphile-worker';
import { Config, loadConfigOrExit } from './config';
import { createLogger, Logger } from './log';
import { createDb } from './db/knex';
import { createReadRouting } from './db/replicas';
import { probeDatabase } from './db/probe';
import { migrateAll, pendingMigrations } from './db/migrate';
import { startEmbeddedPostgres, EmbeddedDb } from './db/embedded';
import { createLimiter } from './limits';
import { createCaches } from './caches';
import { ScoringPool } from './scoring/pool';
import { createApp } from './app';
import type { Deps } from './deps';
import { webRouters } from './web';
import { answerClientError } from './http/client-error';

/**
 * The HTTP server of the web process (requests go to its 'request' listener). A client that sends
 * its request slowly (a byte every few seconds) is answered 408 and dropped after
 * `requestTimeoutMs` (Node's default is 5 minutes, so a few thousand such sockets would hold the
 * process's file descriptors); the check runs every second. Idle keep-alive connections live 65 s
 * (longer than common load balancers' 60 s). What Node's parser refuses is answered in the error
 * envelope (http/client-error.ts).
 */
export function createHttpServer(requestTimeoutMs: number, log: Logger): http.Server {
  const s = http.createServer({
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.round((requestTimeoutMs * 2) / 3),
    connectionsCheckingInterval: Math.min(1000, requestTimeoutMs / 2),
  });
  s.keepAliveTimeout = 65_000;
  s.on('clientError', (err, socket) => answerClientError(err, socket, log));
  return s;
}

export interface BootOptions {
  web: boolean;
  worker: boolean;
  migrate: boolean;
  /** Dev launcher only: without DATABASE_URL, start an embedded PostgreSQL under .data/. */
  allowEmbedded?: boolean;
  /** CLI: without DATABASE_URL, connect to the embedded PostgreSQL that `npm start` runs. */
  useDevDatabase?: boolean;
  /** Fail within this many ms when the database does not answer, before building the pool (the CLI). */
  probeDatabaseMs?: number;
  /**
   * false (the CLI): no SIGINT/SIGTERM handlers. A signal then ends the process as signals do (exit
   * 130 for Ctrl-C; its transactions roll back), unless the running command handles it itself
   * (following a fleet run: it stops following, and the CLI stops and exits with 130).
   */
  signals?: boolean;
  /**
   * Dev launcher: the configuration and logger it made, and the embedded PostgreSQL it started
   * before loading this module, so the database boots while the modules load.
   */
  early?: { config: Config; log: Logger; embedded?: Promise<EmbeddedDb> };
}

export interface Booted {
  config: Config;
  log: Logger;
  deps: Deps;
  server?: http.Server;
  runner?: Runner;
  stop(): Promise<void>;
}

/**
 * Web and worker processes leave migrations to the release step (Procfile). Started without it,
 * every write would be a 500 while /health said ok: such a process stops at once, saying why. A
 * database that cannot be reached yet is not a reason to stop (it is served as an outage).
 */
async function schemaBehind(db: ReturnType<typeof createDb>, log: Logger): Promise<boolean> {
  let pending: string[];
  try {
    pending = await pendingMigrations(db);
  } catch (e) {
    log.warn({ err: e }, 'could not check the database schema at start; going on');
    return false;
  }
  if (!pending.length) return false;
  log.error(
    { pending: pending.length, first: pending[0] },
    `the database schema is behind this code (${pending.length} migrations not run): run the release step first (npm run release)`,
  );
  return true;
}

/** A signal this soon after the first is the same Ctrl-C delivered twice, not a second one. */
const REPEAT_SIGNAL_MS = 1000;

/** Composition root shared by web, worker, release and the dev launcher. */
export async function boot(opts: BootOptions): Promise<Booted> {
  const config = opts.early?.config ?? loadConfigOrExit();
  const log = opts.early?.log ?? createLogger(config.logLevel);
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
    embedded = await (opts.early?.embedded ?? startEmbeddedPostgres(config.dataDir, config.embeddedPgPort, log));
    connectionString = embedded.connectionString;
  }
  if (opts.probeDatabaseMs) await probeDatabase(connectionString, opts.probeDatabaseMs);
  const db = createDb(connectionString, config.dbPoolMax, log);
  // Only the web process serves limited requests: elsewhere the limiter's notice is noise.
  const limiter = createLimiter(config, opts.web ? log : log.child({}, { level: 'error' }));
  const caches = createCaches(config.nodeEnv, connectionString, log);
  const scoringPool = new ScoringPool(config.scoringPoolSize);
  // Read replicas serve the web process's lag-tolerant reads; jobs and the CLI use the primary.
  const reads = opts.web ? createReadRouting(config, log, { primary: db }) : undefined;
  if (reads) caches.evictAgainAfterMs = reads.writes.windowMs;
  const deps: Deps = {
    config,
    log,
    db,
    query: createQuery(db),
    limiter,
    caches,
    scoringPool,
    reads,
    now: () => new Date(),
  };
  let server: http.Server | undefined;
  let runner: Runner | undefined;
  /** Set when the worker starts: a stop meanwhile waits for it, then stops it before the pool goes. */
  let workerStarting: Promise<Runner> | undefined;

  // Each step runs even if an earlier one fails, so the embedded database (a detached
  // process) is never left behind.
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down');
      const step = async (what: string, fn: () => Promise<unknown>) => {
        try {
          await fn();
        } catch (e) {
          log.warn({ err: e }, `shutdown: ${what} failed`);
        }
      };
      if (server) {
        const s = server;
        // In-flight requests get a few seconds; idle keep-alive sockets close at once.
        const force = setTimeout(() => s.closeAllConnections(), 5000);
        await step('web', () => new Promise<void>((r) => s.close(() => r())));
        clearTimeout(force);
      }
      if (workerStarting)
        await step('worker', () =>
          workerStarting!.then(
            (r) => r.stop(),
            () => undefined,
          ),
        );
      await step('scoring pool', () => scoringPool.destroy());
      // After the worker: its last run's changes are published.
      await step('cache changes', () => caches.close());
      await step('limiter', () => limiter.close());
      if (reads) await step('read replicas', () => reads.close());
      await step('database pool', () => db.destroy());
      if (embedded) await step('embedded PostgreSQL', () => embedded!.stop());
      log.info('stopped');
    })());

  // Registered before startup: Ctrl-C while migrating still stops the embedded database.
  let firstSignalAt = 0;
  for (const sig of opts.signals === false ? [] : (['SIGINT', 'SIGTERM'] as const)) {
    process.on(sig, () => {
      if (firstSignalAt) {
        // One Ctrl-C under `npm start` arrives twice: from the terminal and forwarded by npm.
        if (Date.now() - firstSignalAt < REPEAT_SIGNAL_MS) return;
        log.warn({ signal: sig }, 'second signal: exiting at once');
        process.exit(130);
      }
      firstSignalAt = Date.now();
      log.info({ signal: sig }, 'signal received (send it again to exit at once)');
      const guard = setTimeout(() => {
        log.error('shutdown took over 30 s; exiting');
        process.exit(1);
      }, 30_000);
      guard.unref();
      stop().then(
        () => process.exit(0),
        (e) => {
          log.error({ err: e }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }

  try {
    if (opts.migrate) {
      await migrateAll(db, connectionString, { sessionSecret: config.sessionSecret });
      log.info('migrations applied');
    } else if (await schemaBehind(db, log)) {
      await stop();
      process.exit(1);
    }
    if (opts.web) {
      // Before the first request: other processes' writes evict this process's caches from now on.
      await caches.listen();
      // The first check decides which replicas serve; then one every second.
      await reads?.replicas.start();
      const app = createApp(deps, { extraRouters: webRouters(deps) });
      const s = (server = createHttpServer(config.requestTimeoutMs, log));
      s.on('request', app.callback());
      await new Promise<void>((resolve, reject) => {
        const refused = (e: NodeJS.ErrnoException) => reject(e.code === 'EADDRINUSE' ? portInUse(config) : e);
        s.once('error', refused);
        s.listen(config.port, config.host, () => {
          s.off('error', refused);
          resolve();
        });
      });
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : config.port;
      log.info(
        { url: config.publicUrl, port },
        `svc web listening on http://localhost:${port} (public URL ${config.publicUrl})`,
      );
    }
    if (opts.worker && !stopping) {
      // Loaded here, not at the top: a web process never loads the jobs and graphile-worker's runner,
      // and `npm start` answers requests before it has.
      // (require, not import(): under tsx in tests an import() resolves as ESM and needs extensions)
      const { startWorker } = require('./worker-runner') as typeof import('./worker-runner');
      workerStarting = startWorker(deps, connectionString);
      runner = await workerStarting;
    }
  } catch (e) {
    if (server && !server.listening) server = undefined;
    await stop();
    throw e;
  }

  return { config, log, deps, server, runner, stop };
}

/** A taken port explains itself in one line (no EADDRINUSE stack), naming the variable to change. */
function portInUse(config: Config): Error {
  return Object.assign(
    new Error(`PORT ${config.port} is already in use on ${config.host}: stop what listens there, or set PORT`),
    { code: 'PORT_IN_USE' },
  );
}

/** Refusals that explain themselves print their message alone; anything else prints in full. */
export function failedToStart(e: unknown): never {
  const code = (e as { code?: unknown } | null)?.code;
  const plain = e instanceof Error && (code === 'DATA_DIR_IN_USE' || code === 'PORT_IN_USE');
  console.error('failed to start:', plain ? e.message : e);
  process.exit(1);
}
