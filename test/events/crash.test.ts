import { spawn, ChildProcess } from 'child_process';
import path from 'path';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { emitEvent } from '../../src/events/emit';
import { ownerAgentWebhook, Receiver } from './helpers';

const CHILD = path.join(__dirname, 'worker-child.ts');

function startWorker(databaseUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', CHILD], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'test', WORKER_STALE_SECONDS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('worker did not start: ' + out)), 20000);
    child.stdout!.on('data', (c) => {
      out += String(c);
      if (out.includes('ready')) {
        clearTimeout(t);
        resolve(child);
      }
    });
    child.stderr!.on('data', (c) => (out += String(c)));
    child.on('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`worker exited early (${code}): ${out}`));
    });
  });
}

async function until(cond: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook delivery survives a killed worker', function () {
  this.timeout(60000);
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('SIGKILL mid-delivery, restart: every event is delivered at least once, none lost', async () => {
    const ctx = await getContext();
    // Phase 1: the receiver holds every request open, so deliveries are in flight when the worker dies.
    let hang = true;
    const rx = await new Receiver((_n, _q, res) => {
      if (!hang) res.writeHead(200).end();
    }).start();
    try {
      const s = await ownerAgentWebhook(rx.url());
      const N = 20;
      const eventIds: string[] = [];
      for (let i = 0; i < N; i++) {
        eventIds.push(
          await ctx.db.transaction((trx) =>
            emitEvent(trx, { type: 'agent.mentioned', agentId: s.agent.agent.id, data: { n: i } }),
          ),
        );
      }

      const first = await startWorker(ctx.databaseUrl);
      children.push(first);
      await until(() => rx.received.length >= 3, 20000, 'deliveries in flight');
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      const inFlight = rx.received.length;
      expect(inFlight).to.be.greaterThanOrEqual(3);

      // No manual unlock: the next worker finds the dead one's heartbeat stale and releases its
      // jobs itself (src/db/worker-liveness.ts).
      const locked = (
        await ctx.db.raw(
          `select distinct j.locked_by from graphile_worker._private_jobs j
         where j.locked_by is not null and (j.payload->>'eventId' = any(?) or j.payload->>'deliveryId' in
           (select d.id::text from webhook_deliveries d where d.webhook_id = ?))`,
          [eventIds, s.webhook.id],
        )
      ).rows.map((r: { locked_by: string }) => r.locked_by);
      expect(locked.length).to.be.greaterThan(0);

      hang = false;
      const second = await startWorker(ctx.databaseUrl);
      children.push(second);
      await until(
        async () => {
          const r = await ctx
            .db('webhook_deliveries')
            .where({ webhook_id: s.webhook.id, status: 'succeeded' })
            .count<{ count: number }[]>('* as count');
          return Number(r[0].count) === N;
        },
        40000,
        'all deliveries to succeed',
      );
      second.kill('SIGKILL');
      // The second worker removed the dead one's heartbeat when it released its jobs.
      const rows0 = await ctx.db('worker_heartbeats').whereIn('worker_id', locked);
      expect(rows0).to.have.length(0);

      const delivered = new Set(
        rx.received.filter((r) => r.headers['webhook-id']).map((r) => r.headers['webhook-id'] as string),
      );
      for (const id of eventIds) expect(delivered.has(id), id).to.equal(true);
      const rows = await ctx.db('webhook_deliveries').where({ webhook_id: s.webhook.id });
      expect(rows).to.have.length(N);
      expect(new Set(rows.map((r) => r.event_id))).to.deep.equal(new Set(eventIds));
      // In-flight requests of the killed worker were sent again (at-least-once), each still
      // recorded once per attempt.
      expect(rx.received.length).to.be.greaterThanOrEqual(N);
    } finally {
      await rx.stop();
    }
  });
});
