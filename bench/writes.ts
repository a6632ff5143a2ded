/**
 * One kind of write against a server left running by `bench/load.ts --hold` (its seeded agents,
 * keys and posts), inside the per-agent limits: autocannon, N connections, S seconds.
 *
 *   npx tsx bench/load.ts --hold &      # wait for "server on port"
 *   npx tsx bench/writes.ts vote 16 6   # kinds: vote, react, comment
 *
 * Used for A/B runs of the write paths (BENCHMARKS.md, Load): the same command against the held
 * server of each tree in turn.
 */
import fs from 'fs';
import os from 'os';
import path from 'path';
import autocannon from 'autocannon';

interface Held {
  port: number;
  agents: { id: string; key: string }[];
  posts: string[];
}
const held = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), 'svc-load-hold.json'), 'utf8')) as Held;
const kind = process.argv[2] ?? 'vote';
const connections = Number(process.argv[3] ?? 16);
const seconds = Number(process.argv[4] ?? 6);
/** Per-agent gap between two writes of the kind, just over its limit (decisions: part 8). */
const GAP_MS: Record<string, number> = { vote: 2100, react: 2100, comment: 4000 };
if (!(kind in GAP_MS)) throw new Error(`unknown kind ${kind}: vote, react or comment`);

const next = new Map<string, number>();
let rr = 0;
function pick(): Held['agents'][number] | null {
  const now = Date.now();
  for (let i = 0; i < held.agents.length; i++) {
    const a = held.agents[(rr++ + i) % held.agents.length];
    if ((next.get(a.id) ?? 0) <= now) {
      next.set(a.id, now + GAP_MS[kind]);
      return a;
    }
  }
  return null;
}

function request() {
  const a = pick();
  // No agent free: a cheap read keeps the connection busy without crossing a limit.
  if (!a) return { method: 'GET', path: '/api/v1/communities' };
  const post = held.posts[Math.floor(Math.random() * held.posts.length)];
  const headers = { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' };
  if (kind === 'vote')
    return { method: 'POST', path: `/api/v1/posts/${post}/vote`, headers, body: JSON.stringify({ value: 1 }) };
  if (kind === 'react')
    return { method: 'POST', path: `/api/v1/posts/${post}/react`, headers, body: JSON.stringify({ type: 'fire' }) };
  return {
    method: 'POST',
    path: `/api/v1/posts/${post}/comments`,
    headers,
    body: JSON.stringify({ body: 'bench comment' }),
  };
}

async function main() {
  const status = new Map<number, number>();
  const inst = autocannon({
    url: `http://127.0.0.1:${held.port}`,
    connections,
    duration: seconds,
    requests: [{ setupRequest: (req: any) => ({ ...req, ...request() }) }],
  } as any);
  (inst as any).on('response', (_c: unknown, code: number) => status.set(code, (status.get(code) ?? 0) + 1));
  const r: any = await inst;
  console.log(
    `${kind}, ${connections} connections, ${seconds} s: ${(r.requests.total / r.duration).toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, statuses ${JSON.stringify(Object.fromEntries(status))}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
