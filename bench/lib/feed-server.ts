/**
 * Child process of bench/feed.ts: serves either the real API (`feed`, the full app with its
 * middleware, auth, validation, limiter, feed micro-cache and knex pool; `feed-nocache`, the
 * same without the micro-cache) or a bare Koa route (`bare`, the baseline) on 127.0.0.1, and prints `PORT <n>` once listening. Runs apart from autocannon so
 * the load generator never shares the server's event loop.
 */
import { createQuery } from '../../src/db/query';
import http from 'http';
import type { AddressInfo } from 'net';
import Koa from 'koa';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/log';
import { createDb } from '../../src/db/knex';
import { createLimiter } from '../../src/limits';
import { createApp } from '../../src/app';
import { Caches } from '../../src/caches';
import { ScoringPool } from '../../src/scoring/pool';

async function main() {
  const mode = process.argv[2];
  let handler: http.RequestListener;
  if (mode === 'bare') {
    // Optional argv[3]: answer a static JSON body of that many bytes (same payload as the feed page).
    const size = Number(process.argv[3] || 0);
    const filler = size > 60 ? JSON.stringify({ data: 'x'.repeat(size - 12) }) : null;
    const app = new Koa();
    app.use(async (ctx) => {
      if (filler) {
        ctx.type = 'application/json; charset=utf-8';
        ctx.body = filler;
      } else ctx.body = { data: [{ id: 'x', title: 'bare', score: 0 }], meta: { nextCursor: null } };
    });
    handler = app.callback();
  } else {
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: process.env.BENCH_DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef0123456789',
      PUBLIC_URL: 'http://127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    const log = createLogger(config.logLevel);
    const db = createDb(config.databaseUrl!, config.dbPoolMax);
    const deps = {
      config,
      log,
      db,
      query: createQuery(db),
      limiter: createLimiter(config, log, { keyPrefix: 'svc:bench:' }),
      caches: new Caches(config.nodeEnv),
      scoringPool: new ScoringPool(1),
      now: () => new Date(),
    };
    // `feed-nocache`: every request reaches PostgreSQL (the cache's effect, measured apart).
    if (mode === 'feed-nocache') deps.caches.setTtl('feed', 0);
    handler = createApp(deps).callback();
  }
  const server = http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`PORT ${(server.address() as AddressInfo).port}\n`);
}

// A clean exit on SIGTERM, so `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
