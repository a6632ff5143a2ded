/**
 * Webhook fan-out throughput: events emitted in write transactions, fanned out and delivered
 * (signed, over HTTP, recorded per attempt) by graphile-worker to a receiver on 127.0.0.1,
 * end to end. Baseline measured in the same run: the same number of signed POSTs sent straight
 * to the same receiver at the same concurrency (no queue, no database), so the ratio is the
 * cost of durable, recorded, retryable delivery.
 *
 *   npx tsx bench/fanout.ts [--events 300] [--webhooks 1] [--concurrency 4]
 *   (TEST_ADMIN_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a scratch
 *   database is created and dropped)
 */
import { createQuery } from '../src/db/query';
import http from 'http';
import type { AddressInfo } from 'net';
import knexFactory from 'knex';
import pg from 'pg';
import { run, Logger } from 'graphile-worker';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/log';
import { createDb } from '../src/db/knex';
import { migrateAll } from '../src/db/migrate';
import { createLimiter } from '../src/limits';
import { Caches } from '../src/caches';
import { ScoringPool } from '../src/scoring/pool';
import type { Deps } from '../src/deps';
import { createAgent, createOwner } from '../src/identity/service';
import { createWebhook } from '../src/webhooks/service';
import { emitEvent } from '../src/events/emit';
import { postWebhook } from '../src/webhooks/outbound-http';
import { webhookHeaders } from '../src/webhooks/signing';
import { eventFanout } from '../jobs/event_fanout';
import { webhookDeliver } from '../jobs/webhook_deliver';
import { numberArg } from './lib/args';

const EVENTS = numberArg('events', 300);
const WEBHOOKS = numberArg('webhooks', 1);
const CONCURRENCY = numberArg('concurrency', 4);
const ADMIN = process.env.TEST_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function main() {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  const dbName = `svc_bench_fanout_${Date.now().toString(36)}`;
  const admin = knexFactory({ client: 'pg', connection: ADMIN, pool: { min: 0, max: 1 } });
  await admin.raw(`create database "${dbName}"`);
  const u = new URL(ADMIN);
  u.pathname = '/' + dbName;
  const databaseUrl = u.toString();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    SESSION_SECRET: 'bench-session-secret-0123456789abcdef01',
    LOG_LEVEL: 'silent',
  });
  const log = createLogger('silent');
  const db = createDb(databaseUrl, 10);
  const deps: Deps = {
    config,
    log,
    db,
    query: createQuery(db),
    limiter: createLimiter(config, log),
    caches: new Caches(config.nodeEnv),
    scoringPool: new ScoringPool(1),
    now: () => new Date(),
  };
  try {
    await migrateAll(db, databaseUrl);
    const owner = await createOwner(db, { email: 'bench@example.test', password: 'bench-password-123' });
    const agent = await createAgent(db, { handle: 'bench_agent', displayName: 'Bench', ownerId: owner.id });
    let secret = '';
    for (let i = 0; i < WEBHOOKS; i++)
      secret = (await createWebhook(deps, owner.id, agent.id, { url, events: ['agent.mentioned'] })).secret;
    const total = EVENTS * WEBHOOKS;

    // Baseline: the same signed POSTs, straight from this process.
    const body = JSON.stringify({
      type: 'agent.mentioned',
      timestamp: new Date().toISOString(),
      data: { agentId: agent.id, n: 0 },
    });
    let next = 0;
    const b0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) {
          next++;
          await postWebhook({
            url,
            headers: webhookHeaders(secret, 'evt_bench', new Date(), body),
            body,
            guard: { allowPrivate: true },
          });
        }
      }),
    );
    const baselineSecs = (performance.now() - b0) / 1000;
    received = 0;

    // Queued: emit in transactions (as writes do), then let the worker drain it.
    const e0 = performance.now();
    for (let i = 0; i < EVENTS; i++)
      await db.transaction((trx) => emitEvent(trx, { type: 'agent.mentioned', agentId: agent.id, data: { n: i } }));
    const emitSecs = (performance.now() - e0) / 1000;
    const t0 = performance.now();
    const pgPool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY + 2 });
    pgPool.on('error', () => undefined);
    pgPool.on('connect', (c) => c.on('error', () => undefined));
    const runner = await run({
      pgPool,
      concurrency: CONCURRENCY,
      taskList: { event_fanout: eventFanout(deps), webhook_deliver: webhookDeliver(deps) },
      noHandleSignals: true,
      pollInterval: 200,
      logger: new Logger(() => () => undefined),
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [{ count }] = await db('webhook_deliveries')
        .where({ status: 'succeeded' })
        .count<{ count: number }[]>('* as count');
      if (Number(count) >= total) break;
      if (Date.now() > deadline) throw new Error(`only ${count}/${total} deliveries after 120 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const queuedSecs = (performance.now() - t0) / 1000;
    await runner.stop();
    await pgPool.end();
    const lost = total - received;

    const rate = (n: number, s: number) => Math.round(n / s);
    console.log(`events=${EVENTS} webhooks/agent=${WEBHOOKS} deliveries=${total} concurrency=${CONCURRENCY}`);
    console.log(`baseline  direct signed POSTs:            ${rate(total, baselineSecs)} deliveries/s`);
    console.log(`emit      emitEvent in a transaction:     ${rate(EVENTS, emitSecs)} events/s`);
    console.log(
      `queued    fan-out + delivery (worker):    ${rate(EVENTS, queuedSecs)} events/s, ${rate(total, queuedSecs)} deliveries/s`,
    );
    console.log(
      `ratio     queued / baseline deliveries:   ${(rate(total, queuedSecs) / rate(total, baselineSecs)).toFixed(3)}`,
    );
    console.log(`receiver  requests=${received} missing=${Math.max(0, lost)}`);
  } finally {
    await deps.limiter.close();
    await db.destroy();
    server.close();
    await admin.raw(`drop database if exists "${dbName}" with (force)`);
    await admin.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
