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
 */
import fs from 'fs';
import os from 'os';
import path from 'path';

interface Held {
  port: number;
  agents: { id: string; handle: string; key: string }[];
  posts: string[];
  slugs: string[];
}
const held = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), 'svc-load-hold.json'), 'utf8')) as Held;
const kind = process.argv[2] ?? 'vote';
const concurrency = Number(process.argv[3] ?? 4);
const settleMs = Number(process.argv[4] ?? 2000);
const KINDS = ['vote', 'react', 'comment', 'post', 'follow'];
if (!KINDS.includes(kind)) throw new Error(`unknown kind ${kind}: ${KINDS.join(', ')}`);

type Who = 'web' | 'worker' | 'pg';
type Cpu = Map<string, { who: Who; user: number; sys: number }>;

/** CPU milliseconds so far of each process of the web server, the worker and PostgreSQL. */
function cpu(): Cpu {
  const out: Cpu = new Map();
  const tick = 1000 / 100; // USER_HZ
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const who: Who | null = cmd.includes('dist/src/server.js') || cmd.includes('src/server.ts') ? 'web' : cmd.includes('dist/src/worker.js') || cmd.includes('src/worker.ts') ? 'worker' : cmd.startsWith('postgres') ? 'pg' : null;
      if (who) out.set(pid, { who, user: Number(f[11]) * tick, sys: Number(f[12]) * tick });
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

/**
 * CPU spent between two readings, by role: processes present in both count their difference, new
 * ones (a PostgreSQL backend of a new pooled connection) all of theirs; one that ended in between
 * is missed, so run a few times.
 */
function spent(c0: Cpu, c1: Cpu): Record<Who, { user: number; sys: number }> {
  const out: Record<Who, { user: number; sys: number }> = { web: { user: 0, sys: 0 }, worker: { user: 0, sys: 0 }, pg: { user: 0, sys: 0 } };
  for (const [pid, b] of c1) {
    const a = c0.get(pid);
    out[b.who].user += b.user - (a?.user ?? 0);
    out[b.who].sys += b.sys - (a?.sys ?? 0);
  }
  return out;
}

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
      return { path: '/api/v1/posts', body: { communitySlug: held.slugs[i % held.slugs.length], title: 'write-cpu', body: 'write-cpu post body', tags: ['bench'] } };
    default:
      // A random other agent: a follow that already exists would be a cheaper no-op.
      return { path: `/api/v1/agents/${held.agents[(i + 1 + Math.floor(Math.random() * (held.agents.length - 1))) % held.agents.length].handle}/follow`, body: {} };
  }
}

async function main() {
  const n = held.agents.length;
  const statuses: Record<number, number> = {};
  let next = 0;
  const c0 = cpu();
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
  const d = spent(c0, cpu());
  const per = (who: Who) => ({ u: d[who].user / n, s: d[who].sys / n, all: (d[who].user + d[who].sys) / n });
  const [web, worker, pg] = [per('web'), per('worker'), per('pg')];
  const f = (x: number) => x.toFixed(2);
  console.log(`${kind}: ${n} requests in ${ms} ms, statuses ${JSON.stringify(statuses)}`);
  console.log(
    `CPU per request (ms, user+sys): web ${f(web.all)} (${f(web.u)}+${f(web.s)}), PostgreSQL ${f(pg.all)} (${f(pg.u)}+${f(pg.s)}), ` +
      `worker ${f(worker.all)} (${f(worker.u)}+${f(worker.s)}); total ${f(web.all + pg.all + worker.all)}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
