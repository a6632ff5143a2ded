import { createQuery } from '../../src/db/query';
import http from 'http';
import type { AddressInfo } from 'net';
import knexFactory, { Knex } from 'knex';
import { loadConfig, Config } from '../../src/config';
import { createLogger } from '../../src/log';
import { createDb } from '../../src/db/knex';
import { migrateAll } from '../../src/db/migrate';
import { createLimiter } from '../../src/limits';
import { createCaches } from '../../src/caches';
import { ScoringPool } from '../../src/scoring/pool';
import { createApp } from '../../src/app';
import type { Deps } from '../../src/deps';
import { webRouters } from '../../src/web';
import { createHttpServer } from '../../src/boot';

/** The machine's PostgreSQL (trust auth) and Redis; each test run gets a fresh database. */
export const ADMIN_PG_URL = process.env.TEST_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

export interface TestContext {
  dbName: string;
  databaseUrl: string;
  config: Config;
  deps: Deps;
  db: Knex;
  server: http.Server;
  baseUrl: string;
  /** Moves deps.now(); null returns to the real clock. */
  setNow(d: Date | null): void;
}

let ctxPromise: Promise<TestContext> | null = null;

export function dbUrl(name: string): string {
  const u = new URL(ADMIN_PG_URL);
  u.pathname = '/' + name;
  return u.toString();
}

export function testConfig(databaseUrl: string, extra: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    // Real Redis; createLimiter gives each test run its own random key prefix.
    REDIS_URL: TEST_REDIS_URL,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    SESSION_SECRET: 'test-session-secret-0123456789abcdef0123',
    LOG_LEVEL: process.env.LOG_LEVEL || 'silent',
    PORT: '0',
    ...extra,
  });
}

async function create(): Promise<TestContext> {
  const dbName = `svc_test_${Date.now().toString(36)}_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN_PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${dbName}"`);
  await admin.destroy();
  const databaseUrl = dbUrl(dbName);
  const config0 = testConfig(databaseUrl);
  const db = createDb(databaseUrl, 20);
  await migrateAll(db, databaseUrl, { sessionSecret: config0.sessionSecret });
  let fixedNow: Date | null = null;
  // The web process's server (timeouts, the parser's refusals in the envelope); the app is attached below.
  const server = createHttpServer(30_000, createLogger('silent'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const config = testConfig(databaseUrl, { PUBLIC_URL: `http://127.0.0.1:${port}` });
  const log = createLogger(config.logLevel);
  const deps: Deps = {
    config,
    log,
    db,
    query: createQuery(db),
    limiter: createLimiter(config, log, { clock: () => (fixedNow ?? new Date()).getTime() }),
    // Linked to other processes as a web process is: tests run real ones beside it (test/cache/).
    caches: createCaches(config.nodeEnv, databaseUrl, log),
    scoringPool: new ScoringPool(config.scoringPoolSize),
    now: () => fixedNow ?? new Date(),
  };
  await deps.caches.listen();
  const app = createApp(deps, { extraRouters: webRouters(deps) });
  server.on('request', app.callback());
  return {
    dbName,
    databaseUrl,
    config,
    deps,
    db,
    server,
    baseUrl: `http://127.0.0.1:${port}`,
    setNow: (d) => {
      fixedNow = d;
    },
  };
}

/** One shared context per mocha run (created on first use). */
export function getContext(): Promise<TestContext> {
  ctxPromise ??= create();
  return ctxPromise;
}

/**
 * Mocha hooks giving a suite a fresh context of its own (app, server, empty database) that
 * getContext returns until the suite ends, when it is closed and the shared one comes back. For a
 * suite whose cost grows with the shared database, such as the fuzz's check of every row of every
 * table before and after each batch.
 */
export function isolatedContext(): { before(): Promise<void>; after(): Promise<void> } {
  let shared: Promise<TestContext> | null = null;
  return {
    async before() {
      shared = ctxPromise;
      ctxPromise = create();
      await ctxPromise;
    },
    async after() {
      await closeContext();
      ctxPromise = shared;
    },
  };
}

export async function closeContext(): Promise<void> {
  if (!ctxPromise) return;
  const ctx = await ctxPromise;
  ctxPromise = null;
  await new Promise<void>((r) => ctx.server.close(() => r()));
  ctx.server.closeAllConnections?.();
  await ctx.deps.limiter.close();
  await ctx.deps.caches.close();
  await ctx.deps.scoringPool.destroy();
  await ctx.db.destroy();
  const admin = knexFactory({ client: 'pg', connection: ADMIN_PG_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`drop database if exists "${ctx.dbName}" with (force)`);
  await admin.destroy();
}
