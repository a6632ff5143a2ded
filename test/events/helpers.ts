import type { JobName } from '../../src/db/jobs';
import http from 'http';
import type { AddressInfo } from 'net';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent, newOwner, TestOwner, TestAgent } from '../helpers/factories';
import { deliverOnce, DeliverJob, DeliverOutcome } from '../../src/webhooks/delivery';
import { fanoutEvent, FirstOutcome } from '../../src/webhooks/fanout';
import { emitEvent, EventType } from '../../src/events/emit';
import type { Deps } from '../../src/deps';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
}

export type Responder = (n: number, req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real HTTP receiver on 127.0.0.1; `respond` decides each answer (n counts from 1). */
export class Receiver {
  received: Received[] = [];
  private server: http.Server;
  port = 0;
  constructor(public respond: Responder = (_n, _q, res) => res.writeHead(204).end()) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), url: req.url ?? '' });
        this.respond(this.received.length, req, res);
      });
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections?.();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

export interface Setup {
  owner: TestOwner;
  agent: TestAgent;
  webhook: { id: string; url: string; secret: string; events: string[]; enabled: boolean };
}

export async function ownerAgentWebhook(url: string, events?: string[]): Promise<Setup> {
  const owner = await newOwner();
  const agent = await newAgent({ owner });
  const r = await api('POST', `/owner/agents/${agent.agent.id}/webhooks`, {
    session: owner.session,
    body: events ? { url, events } : { url },
  });
  if (r.status !== 201) throw new Error(`webhook creation failed: ${r.status} ${r.text}`);
  return { owner, agent, webhook: r.body.data };
}

/**
 * Emits an event the way a write does (job in a transaction), then runs the fan-out task body:
 * deliveries created and their first attempts made (with `deps`' clock and config). Returns the
 * event id and the first attempts' outcomes.
 */
export async function emitAndDeliver(
  agentId: string,
  opts: { type?: EventType; data?: Record<string, unknown>; deps?: Deps } = {},
): Promise<{ eventId: string; outcomes: FirstOutcome[] }> {
  const ctx = await getContext();
  const type = opts.type ?? 'agent.followed';
  const data = opts.data ?? { followerHandle: '@someone' };
  const eventId = await ctx.db.transaction((trx) => emitEvent(trx, { type, agentId, data }));
  const jobs = await takeJobs('event_fanout', (p) => p.eventId === eventId);
  const outcomes: FirstOutcome[] = [];
  for (const j of jobs) outcomes.push(...(await fanoutEvent(opts.deps ?? ctx.deps, j.payload)));
  return { eventId, outcomes };
}

/** emitAndDeliver with the context's deps, answering the event id. */
export async function emitAndFanout(
  agentId: string,
  type: EventType = 'agent.followed',
  data: Record<string, unknown> = { followerHandle: '@someone' },
): Promise<string> {
  return (await emitAndDeliver(agentId, { type, data })).eventId;
}

export interface QueuedJob {
  id: string;
  payload: any;
  run_at: Date;
}

/** Removes and returns queued jobs of a task matching `filter` (tests run task bodies directly). */
export async function takeJobs(task: JobName, filter: (payload: any) => boolean): Promise<QueuedJob[]> {
  const { db } = await getContext();
  const rows: QueuedJob[] = (
    await db.raw(
      `select j.id, j.payload, j.run_at from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
       where t.identifier = ? and j.locked_at is null order by j.run_at, j.id`,
      [task],
    )
  ).rows;
  const mine = rows.filter((r) => filter(r.payload));
  if (mine.length) await db.raw('select graphile_worker.complete_jobs(?::bigint[])', [mine.map((m) => m.id)]);
  return mine;
}

/** Runs every queued delivery job (retries, redeliveries) of these deliveries, whatever its runAt. */
export async function runDueDeliveries(
  deps: Deps,
  deliveryIds: Set<string>,
  opts: { timeoutMs?: number } = {},
): Promise<DeliverOutcome[]> {
  const jobs = await takeJobs('webhook_deliver', (p) => deliveryIds.has(p.deliveryId));
  const out: DeliverOutcome[] = [];
  for (const j of jobs) out.push(await deliverOnce(deps, j.payload as DeliverJob, opts));
  return out;
}

export async function deliveryIdsOf(webhookId: string): Promise<Set<string>> {
  const { db } = await getContext();
  return new Set((await db('webhook_deliveries').where({ webhook_id: webhookId }).select('id')).map((r) => r.id));
}

/** Deps whose clock the test moves without touching the shared context. */
export async function clockDeps(start = new Date()): Promise<{ deps: Deps; advance(ms: number): void; now(): Date }> {
  const ctx = await getContext();
  let t = start.getTime();
  const deps: Deps = { ...ctx.deps, now: () => new Date(t) };
  return { deps, advance: (ms) => void (t += ms), now: () => new Date(t) };
}
