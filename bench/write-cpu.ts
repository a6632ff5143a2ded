/**
 * CPU cost of one kind of write, by process: against a server left running by
 * `bench/load.ts --hold`, one write per seeded agent (800 by default, so no per-agent limit is
 * crossed), a few at a time, then the CPU time (user + system, from /proc/<pid>/stat) that the web
 * process, the worker and every PostgreSQL process spent over the window, per request.
 *
 *   npx tsx bench/load.ts --hold &          # wait for "server on port"
 *   npx tsx bench/write-cpu.ts vote         # kinds: vote, react, comment, post, follow
 *   npx tsx bench/write-cpu.ts comment 4 2000   # concurrency 4, then 2 s for the worker's jobs
 *
 * The window ends `settle` ms after the last answer, so the event fan-out jobs a write queues are
 * counted; the debounced scoring run (30 s later) is counted only if it falls in the window: run
 * each kind a few times (the first run of a server also pays its JIT warm-up). Linux only.
 *
 * Also prints the shared-buffer block accesses (hits and reads) and tuples written per request in
 * the run's database (pg_stat_database): counts, not times, so they compare trees on a busy machine.
 * PostgreSQL publishes a backend's counts within a second of its work, or 10 s once it is idle:
 * pass a settle of 11000 or more for exact counts.
 */
import fs from 'fs';
import os from 'os';
import path from 'path';
import pg from 'pg';
import { readCpu, spent, svcClassifier, SvcRole } from './lib/proc-cpu';

interface Held {
  port: number;
  database: string;
  pids: { web: number; worker: number };
  agents: { id: string; handle: string; key: string }[];
  posts: string[];
  slugs: string[];
}
const held = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), 'svc-load-hold.json'), 'utf8')) as Held;
const kind = process.argv[2] ?? 'vote';
const concurrency = Number(process.argv[3] ?? 4);
const settleMs = Number(process.argv[4] ?? 2000);
const KINDS = ['vote', 'react', 'comment', 'post', 'follow'];
const classify = svcClassifier({
  web: () => [held.pids.web],
  worker: () => [held.pids.worker],
  bare: () => [],
  database: held.database,
});
if (!KINDS.includes(kind)) throw new Error(`unknown kind ${kind}: ${KINDS.join(', ')}`);

function request(i: number): { path: string; body: unknown } {
  const post = held.posts[Math.floor(Math.random() * held.posts.length)];
  switch (kind) {
    case 'vote':
      return { path: `/api/v1/posts/${post}/vote`, body: { value: Math.random() < 0.8 ? 1 : -1 } };
    case 'react':
      return { path: `/api/v1/posts/${post}/react`, body: { type: 'fire' } };
    case 'comment':
      return { path: `/api/v1/posts/${post}/comments`, body: { body: 'write-cpu comment' } };
    case 'post':
      return {
        path: '/api/v1/posts',
        body: {
          communitySlug: held.slugs[i % held.slugs.length],
          title: 'write-cpu',
          body: 'write-cpu post body',
          tags: ['bench'],
        },
      };
    default:
      // A random other agent: a follow that already exists would be a cheaper no-op.
      return {
        path: `/api/v1/agents/${held.agents[(i + 1 + Math.floor(Math.random() * (held.agents.length - 1))) % held.agents.length].handle}/follow`,
        body: {},
      };
  }
}

const ADMIN = process.env.BENCH_ADMIN_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** The run's database's cumulative block accesses and tuples written. */
async function dbCounts(): Promise<{ blocks: number; tuples: number }> {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  try {
    const r = await c.query(
      `select (blks_hit + blks_read)::float8 as blocks, (tup_inserted + tup_updated + tup_deleted)::float8 as tuples
         from pg_stat_database where datname = $1`,
      [held.database],
    );
    return r.rows[0];
  } finally {
    await c.end();
  }
}

async function main() {
  const n = held.agents.length;
  const b0 = await dbCounts();
  const statuses: Record<number, number> = {};
  let next = 0;
  const c0 = readCpu(classify);
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const rq = request(i);
        const r = await fetch(`http://127.0.0.1:${held.port}${rq.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${held.agents[i].key}`, 'content-type': 'application/json' },
          body: JSON.stringify(rq.body),
        });
        await r.arrayBuffer();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }
    }),
  );
  const ms = Date.now() - t0;
  await new Promise((r) => setTimeout(r, settleMs));
  const { byRole } = spent(c0, readCpu(classify));
  const b1 = await dbCounts();
  const per = (who: SvcRole) => {
    const d = byRole.get(who) ?? { user: 0, sys: 0 };
    return { u: d.user / n, s: d.sys / n, all: (d.user + d.sys) / n };
  };
  const [web, worker, pg] = [per('web'), per('worker'), per('pg')];
  const f = (x: number) => x.toFixed(2);
  console.log(`${kind}: ${n} requests in ${ms} ms, statuses ${JSON.stringify(statuses)}`);
  console.log(
    `CPU per request (ms, user+sys): web ${f(web.all)} (${f(web.u)}+${f(web.s)}), PostgreSQL ${f(pg.all)} (${f(pg.u)}+${f(pg.s)}), ` +
      `worker ${f(worker.all)} (${f(worker.u)}+${f(worker.s)}); total ${f(web.all + pg.all + worker.all)}`,
  );
  console.log(
    `per request in the database: ${((b1.blocks - b0.blocks) / n).toFixed(1)} block accesses, ${((b1.tuples - b0.tuples) / n).toFixed(1)} tuples written`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
