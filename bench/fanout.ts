/**
 * Webhook fan-out throughput: events emitted in write transactions, fanned out and delivered
 * (signed, over HTTP, recorded per attempt) by graphile-worker to a receiver on 127.0.0.1,
 * end to end. Baseline measured in the same run: the same number of signed POSTs sent straight
 * to the same receiver at the same concurrency (no queue, no database), so the ratio is the
 * cost of durable, recorded, retryable delivery. `--events` are the measured events, split over
 * `--rounds`; a first round of both phases, as large as a measured one, warms up and is not counted.
 *
 *   npx tsx bench/fanout.ts [--events 300] [--webhooks 1] [--concurrency 4] [--rounds 3]
 *     [--local-queue N] [--complete-batch MS]   (graphile-worker batching; default: the worker's delivery runner's)
 *     [--cpu-prof FILE]   (V8 CPU profiles of the measured queued phases, and in FILE.baseline.cpuprofile of the baseline's)
 *   (TEST_ADMIN_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a scratch
 *   database is created and dropped)
 */
import fs from 'fs';
import { createQuery, Query } from '../src/db/query';
import http from 'http';
import inspector from 'inspector';
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
import { deliveryRunOptions } from '../src/worker-runner';
import { procAvailable, readCpu, Reading, spent } from './lib/proc-cpu';

const EVENTS = numberArg('events', 300);
const WEBHOOKS = numberArg('webhooks', 1);
const CONCURRENCY = numberArg('concurrency', 4);
const ROUNDS = numberArg('rounds', 3);
const LOCAL_QUEUE = process.argv.includes('--local-queue') ? numberArg('local-queue', 0) : undefined;
const COMPLETE_BATCH = process.argv.includes('--complete-batch') ? numberArg('complete-batch', 0) : undefined;

/** `--cpu-prof FILE`: a V8 CPU profile of this process during the queued phases only. */
const CPU_PROF = process.argv.includes('--cpu-prof') ? process.argv[process.argv.indexOf('--cpu-prof') + 1] : null;
const inspectorSession = CPU_PROF ? new inspector.Session() : null;
function post(method: string, params?: object): Promise<any> {
  return new Promise((resolve, reject) =>
    inspectorSession!.post(method, params, (err, res) => (err ? reject(err) : resolve(res))),
  );
}

type Role = 'bench' | 'pg' | 'pgQueue';
/** Client ports of graphile-worker's connections: their backends' CPU is the queue's own. */
const queuePorts = new Set<string>();
/**
 * This process and the PostgreSQL backends of the bench's database (titled "postgres: <cluster>:
 * <user> <db> <host>(<client port>) ..."), graphile-worker's told apart by their client port.
 */
function cpuReading(database: string): Reading<Role> | null {
  if (!procAvailable) return null;
  return readCpu<Role>((pid, cmd) => {
    if (pid === process.pid) return 'bench';
    const backend = /^postgres: [^:]+: (\S+) (\S+) [^(]*\((\d+)\)/.exec(cmd);
    if (!backend || backend[2] !== database) return null;
    return queuePorts.has(backend[3]) ? 'pgQueue' : 'pg';
  });
}
/** CPU milliseconds of this process and of PostgreSQL between two readings. */
type Cpu = { bench: number; benchSys: number; pg: number; pgQueue: number };
/** CPU milliseconds of this process (of which in the kernel) and of PostgreSQL between two readings. */
function cpuSpent(a: Reading<Role> | null, b: Reading<Role> | null): Cpu {
  if (!a || !b) return { bench: 0, benchSys: 0, pg: 0, pgQueue: 0 };
  const by = spent(a, b).byRole;
  const ms = (r: Role) => (by.get(r)?.user ?? 0) + (by.get(r)?.sys ?? 0);
  return {
    bench: ms('bench'),
    benchSys: by.get('bench')?.sys ?? 0,
    pg: ms('pg') + ms('pgQueue'),
    pgQueue: ms('pgQueue'),
  };
}
/** Named statements run by the measured rounds: runs, items (first array's length), milliseconds until answered. */
const statements = new Map<string, { runs: number; items: number; ms: number }>();
let counting = false;
function count<T>(name: string, first: unknown, run: () => T): T {
  if (!counting) return run();
  const c = statements.get(name) ?? { runs: 0, items: 0, ms: 0 };
  statements.set(name, c);
  c.runs++;
  c.items += Array.isArray(first) ? first.length : 1;
  const t0 = performance.now();
  const out = run();
  void Promise.resolve(out).then(
    () => (c.ms += performance.now() - t0),
    () => undefined,
  );
  return out;
}
function counted(q: Query): Query {
  return (s, values, via) => count(s.name, values[0], () => q(s, values, via));
}
const ADMIN = process.env.TEST_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function main() {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.headers['webhook-id'] !== 'evt_bench') received++;
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
    query: counted(createQuery(db)),
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
    const perRound = Math.ceil(EVENTS / ROUNDS);

    // The signed POSTs of the baseline, straight from this process.
    const body = JSON.stringify({
      type: 'agent.mentioned',
      timestamp: new Date().toISOString(),
      data: { agentId: agent.id, n: 0 },
    });
    async function direct(n: number): Promise<void> {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < n) {
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
    }

    const pgPool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY + 2 });
    pgPool.on('error', () => undefined);
    pgPool.on('connect', (c) => {
      c.on('error', () => undefined);
      const port = (c as unknown as { connection: { stream: { localPort?: number } } }).connection.stream.localPort;
      if (port) queuePorts.add(String(port));
      // graphile-worker's own statements, counted with the service's (by their prepared names).
      const query = c.query.bind(c) as (...a: unknown[]) => unknown;
      (c as unknown as { query: typeof query }).query = (...a) => {
        const config = a[0] as { name?: string; values?: unknown[] } | null;
        return config?.name ? count(config.name, config.values?.[0], () => query(...a)) : query(...a);
      };
    });
    const runner = await run({
      pgPool,
      taskList: { event_fanout: eventFanout(deps), webhook_deliver: webhookDeliver(deps) },
      noHandleSignals: true,
      logger: new Logger(() => () => undefined),
      ...deliveryRunOptions(CONCURRENCY, {
        ...(LOCAL_QUEUE !== undefined ? { localQueueSize: LOCAL_QUEUE } : {}),
        ...(COMPLETE_BATCH !== undefined ? { completeJobBatchDelay: COMPLETE_BATCH } : {}),
      }),
    });

    // Rounds alternate the baseline and the queued run, so both see the same machine. A first
    // round of both phases, the size of a measured one, is not counted: without it the ratio
    // measures warm-up (JIT, first connections), which the baseline gains most from.
    const rate = (x: number, secs: number) => Math.round(x / secs);
    const us = (ms: number) => Math.round((ms * 1000) / total);
    let baselineSecs = 0;
    let queuedSecs = 0;
    let emitSecs = 0;
    const baselineCpu: Cpu = { bench: 0, benchSys: 0, pg: 0, pgQueue: 0 };
    const queuedCpu: Cpu = { bench: 0, benchSys: 0, pg: 0, pgQueue: 0 };
    const add = (to: Cpu, d: Cpu) => {
      to.bench += d.bench;
      to.benchSys += d.benchSys;
      to.pg += d.pg;
      to.pgQueue += d.pgQueue;
    };
    let done = 0;
    let emitted = 0;
    let seq = 0;
    const ratios: string[] = [];
    let warmup = '';
    const profiles: any[] = [];
    const baselineProfiles: any[] = [];
    if (inspectorSession) {
      inspectorSession.connect();
      await post('Profiler.enable');
    }
    async function round(n: number, measured: boolean): Promise<void> {
      if (inspectorSession && measured) await post('Profiler.start');
      const c0 = cpuReading(dbName);
      const b0 = performance.now();
      await direct(n * WEBHOOKS);
      const b = (performance.now() - b0) / 1000;
      const cb = cpuSpent(c0, cpuReading(dbName));
      if (inspectorSession && measured) baselineProfiles.push((await post('Profiler.stop')).profile);

      // Queued: the round's events emitted in one transaction (as writes do, each its own
      // statement); the worker sees them at commit, and the clock runs from there until every
      // delivery is recorded as succeeded.
      const e0 = performance.now();
      await db.transaction(async (trx) => {
        for (let i = 0; i < n; i++)
          await emitEvent(trx, { type: 'agent.mentioned', agentId: agent.id, data: { n: seq + i } });
      });
      const e = (performance.now() - e0) / 1000;
      seq += n;
      done += n * WEBHOOKS;
      if (inspectorSession && measured) await post('Profiler.start');
      counting = measured;
      const c1 = cpuReading(dbName);
      const t0 = performance.now();
      const deadline = Date.now() + 300_000;
      for (;;) {
        // The database is asked only once the receiver has every request (asking all along
        // would add its own load to the measured PostgreSQL CPU).
        if (received < done && Date.now() < deadline) {
          await new Promise((res) => setTimeout(res, 2));
          continue;
        }
        const [{ count }] = await db('webhook_deliveries')
          .where({ status: 'succeeded' })
          .count<{ count: number }[]>('* as count');
        if (Number(count) >= done) break;
        if (Date.now() > deadline) throw new Error(`only ${count}/${done} deliveries after 300 s`);
        await new Promise((res) => setTimeout(res, 5));
      }
      const q = (performance.now() - t0) / 1000;
      counting = false;
      const cq = cpuSpent(c1, cpuReading(dbName));
      if (inspectorSession && measured) profiles.push((await post('Profiler.stop')).profile);
      const shown = `${(b / q).toFixed(2)} (${rate(n * WEBHOOKS, b)}/${rate(n * WEBHOOKS, q)})`;
      if (!measured) {
        warmup = shown;
        return;
      }
      add(baselineCpu, cb);
      add(queuedCpu, cq);
      emitSecs += e;
      baselineSecs += b;
      queuedSecs += q;
      ratios.push(shown);
    }
    await round(perRound, false);
    for (let r = 0; r < ROUNDS && emitted < EVENTS; r++) {
      const n = Math.min(perRound, EVENTS - emitted);
      await round(n, true);
      emitted += n;
    }
    // Each phase's rounds as one profile: their nodes and samples side by side (ids made unique).
    const writeProfile = (file: string, profiles: any[]) => {
      const merged = {
        nodes: [] as any[],
        startTime: profiles[0].startTime,
        endTime: 0,
        samples: [] as number[],
        timeDeltas: [] as number[],
      };
      profiles.forEach((p, i) => {
        const off = i * 10_000_000;
        for (const n of p.nodes)
          merged.nodes.push({ ...n, id: n.id + off, children: n.children?.map((c: number) => c + off) });
        merged.samples.push(...p.samples.map((x: number) => x + off));
        merged.timeDeltas.push(...p.timeDeltas);
        merged.endTime = p.endTime;
      });
      fs.writeFileSync(file, JSON.stringify(merged));
    };
    if (CPU_PROF && profiles.length) {
      writeProfile(CPU_PROF, profiles);
      writeProfile(CPU_PROF.replace(/(\.cpuprofile)?$/, '.baseline.cpuprofile'), baselineProfiles);
    }
    await runner.stop();
    // Plans of the service's named statements on the pool's connections: a custom plan is planned
    // again on every run (PostgreSQL picks one when the values' estimate beats the generic plan's).
    const plans = new Map<string, { generic: number; custom: number }>();
    const client = db.client as {
      acquireConnection(): Promise<pg.Client>;
      releaseConnection(c: pg.Client): Promise<void>;
    };
    const held: pg.Client[] = [];
    for (let i = 0; i < 10; i++) {
      const c = await client.acquireConnection();
      held.push(c);
      const r = await c.query(
        `select name, generic_plans, custom_plans from pg_prepared_statements where name like 'webhooks%'`,
      );
      for (const row of r.rows as { name: string; generic_plans: string; custom_plans: string }[]) {
        const p = plans.get(row.name) ?? { generic: 0, custom: 0 };
        p.generic += Number(row.generic_plans);
        p.custom += Number(row.custom_plans);
        plans.set(row.name, p);
      }
    }
    for (const c of held) await client.releaseConnection(c);
    // graphile-worker's, on its own pool's connections (idle once the runner has stopped).
    const queueClients = await Promise.all(Array.from({ length: pgPool.totalCount }, () => pgPool.connect()));
    for (const c of queueClients) {
      const r = await c.query(`select name, generic_plans, custom_plans from pg_prepared_statements`);
      for (const row of r.rows as { name: string; generic_plans: string; custom_plans: string }[]) {
        const p = plans.get(row.name) ?? { generic: 0, custom: 0 };
        p.generic += Number(row.generic_plans);
        p.custom += Number(row.custom_plans);
        plans.set(row.name, p);
      }
      c.release();
    }
    await pgPool.end();
    const lost = done - received;
    const attempts = Number((await db('webhook_delivery_attempts').count<{ count: number }[]>('* as count'))[0].count);

    console.log(
      `events=${EVENTS} webhooks/agent=${WEBHOOKS} deliveries=${total} concurrency=${CONCURRENCY} rounds=${ratios.length} ` +
        `localQueue=${LOCAL_QUEUE ?? 'default'} completeJobBatchDelay=${COMPLETE_BATCH ?? 'default'}`,
    );
    console.log(
      `baseline  direct signed POSTs:            ${rate(total, baselineSecs)} deliveries/s, CPU µs each: ${us(baselineCpu.bench)} node (sender and receiver; ${us(baselineCpu.benchSys)} in the kernel)`,
    );
    console.log(`emit      emitEvent in a transaction:     ${rate(EVENTS, emitSecs)} events/s`);
    console.log(
      `queued    fan-out + delivery (worker):    ${rate(EVENTS, queuedSecs)} events/s, ${rate(total, queuedSecs)} deliveries/s, ` +
        `CPU µs each: ${us(queuedCpu.bench)} node (worker and receiver; ${us(queuedCpu.benchSys)} in the kernel) + ${us(queuedCpu.pg)} PostgreSQL (${us(queuedCpu.pgQueue)} of it graphile-worker's connections)`,
    );
    console.log(
      `ratio     queued / baseline deliveries:   ${(baselineSecs / queuedSecs).toFixed(3)} (rounds, ratio (baseline/queued deliveries/s): ${ratios.join(' ')}; ` +
        `warm-up round, not counted: ${warmup}; seconds per phase: ${(baselineSecs / ratios.length).toFixed(1)} / ${(queuedSecs / ratios.length).toFixed(1)})`,
    );
    const postMs = Number(
      (await db('webhook_deliveries').avg<{ avg: string }[]>('latency_ms as avg'))[0].avg ?? 0,
    ).toFixed(1);
    const slotMs = (secs: number, jobs: number) => ((CONCURRENCY * secs * 1000) / jobs).toFixed(1);
    console.log(
      `latency   ms a slot spends on a job (concurrency × time / jobs): baseline ${slotMs(baselineSecs, total)} ` +
        `(a POST), queued ${slotMs(queuedSecs, EVENTS)} (a fan-out of ${WEBHOOKS}; a POST, as recorded: ${postMs})`,
    );
    console.log(
      `statements (measured rounds): ${[...statements]
        .map(
          ([name, c]) => `${name} ${c.runs} × ${(c.items / c.runs).toFixed(1)} items, ${(c.ms / c.runs).toFixed(1)} ms`,
        )
        .join('; ')}`,
    );
    console.log(`plans     generic/custom: ${[...plans].map(([n, p]) => `${n} ${p.generic}/${p.custom}`).join('; ')}`);
    console.log(
      `receiver  requests=${received} missing=${Math.max(0, lost)} extra=${Math.max(0, -lost)} attempts recorded=${attempts} (deliveries ${done}, warm-up round included)`,
    );
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
