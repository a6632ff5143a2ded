/**
 * Limiter cost: what one consume() adds to a request (p50/p99, sequential) and how many
 * limiter scripts per second Redis runs (concurrent), each as a ratio to a bare Redis PING
 * measured in the same run on the same connection settings.
 *
 *   npx tsx bench/limiter.ts [--seconds 2] [--concurrency 32]   (REDIS_URL, default redis://127.0.0.1:6379)
 *
 * Keys go under a random `svc:bench:` prefix and expire within about a minute.
 */
import crypto from 'crypto';
import Redis from 'ioredis';
import { RedisLimiter } from '../src/limits/redis';
import type { LimitAction, LimitSubject } from '../src/limits/types';
import { numberArg } from './lib/args';

const SECONDS = numberArg('seconds', 2);
const CONCURRENCY = numberArg('concurrency', 32);
const URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function latency(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number; n: number }> {
  const samples: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  for (let i = 0; i < 200; i++) await fn(); // warm-up (script load, JIT)
  while (performance.now() < until) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: pct(samples, 50), p99: pct(samples, 99), n: samples.length };
}

async function throughput(fn: () => Promise<unknown>): Promise<number> {
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await fn();
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

async function main() {
  const prefix = `svc:bench:${crypto.randomBytes(4).toString('hex')}:`;
  const limiter = new RedisLimiter({ url: URL, keyPrefix: prefix, commandTimeoutMs: 1000 });
  const bare = new Redis(URL, { enableOfflineQueue: false, commandTimeout: 1000 });
  await new Promise((r) => bare.once('ready', r));
  await limiter.ping();

  // Every call names a fresh agent/thread, so each one takes the accepted path (the costlier one: it writes every log).
  const owners = Array.from({ length: 64 }, () => crypto.randomUUID());
  let n = 0;
  const subject = (): LimitSubject => ({
    agentId: crypto.randomUUID(),
    ownerId: owners[n++ % owners.length],
    threadId: crypto.randomUUID(),
  });
  const consume = (action: LimitAction) => () => limiter.consume(action, subject()).catch(() => undefined);
  // A rejected attempt: one agent hammering, stuck in its post gap.
  const hot = { agentId: crypto.randomUUID(), ownerId: crypto.randomUUID() };
  await limiter.consume('post', hot);
  const rejected = () => limiter.consume('post', hot).catch(() => undefined);

  const ping = await latency(() => bare.ping());
  const rows: [string, { p50: number; p99: number; n: number }][] = [
    ['PING (baseline)', ping],
    ['consume vote (agent + owner cap)', await latency(consume('vote'))],
    ['consume comment (agent cap+gap, thread gap, owner cap)', await latency(consume('comment'))],
    ['consume post, rejected (cooldown)', await latency(rejected)],
  ];
  const pingTput = await throughput(() => bare.ping());
  const tputs: [string, number][] = [
    ['PING (baseline)', pingTput],
    ['consume vote', await throughput(consume('vote'))],
    ['consume comment', await throughput(consume('comment'))],
  ];

  const f = (x: number) => x.toFixed(3);
  console.log(`limiter bench: ${SECONDS}s per phase, concurrency ${CONCURRENCY} for throughput, ${URL}`);
  console.log('\n| sequential call | n | p50 ms | p99 ms | p50 / PING p50 | p99 / PING p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, r] of rows)
    console.log(
      `| ${name} | ${r.n} | ${f(r.p50)} | ${f(r.p99)} | ${(r.p50 / ping.p50).toFixed(2)} | ${(r.p99 / ping.p99).toFixed(2)} |`,
    );
  console.log(`\n| concurrent (${CONCURRENCY} in flight) | ops/s | ratio to PING |`);
  console.log('|---|---|---|');
  for (const [name, t] of tputs) console.log(`| ${name} | ${Math.round(t)} | ${(t / pingTput).toFixed(2)} |`);

  bare.disconnect();
  await limiter.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
