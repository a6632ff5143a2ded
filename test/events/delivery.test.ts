import crypto from 'crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { queries } from '../helpers/queries';
import {
  clockDeps,
  deliveryIdsOf,
  emitAndDeliver,
  emitAndFanout,
  ownerAgentWebhook,
  Receiver,
  runDueDeliveries,
  takeJobs,
} from './helpers';
import { deliverOnce, sendAttempt } from '../../src/webhooks/delivery';
import { fanoutEvent, pendingWebhooks, recordAndReadPending, recordFirstAttempts } from '../../src/webhooks/fanout';
import { emitEvent } from '../../src/events/emit';
import { pruneDeliveries } from '../../src/webhooks/retention';
import { RETRY_DELAYS_MS, MAX_ATTEMPTS, DELIVERY_RETENTION_MS, ROTATION_OVERLAP_MS } from '../../src/webhooks/policy';
import { postWebhook } from '../../src/webhooks/outbound-http';
import { encryptSecret } from '../../src/webhooks/signing';
import { createDb } from '../../src/db/knex';
import { createQuery } from '../../src/db/query';

describe('webhook delivery', () => {
  const receivers: Receiver[] = [];
  async function receiver(respond?: ConstructorParameters<typeof Receiver>[0]): Promise<Receiver> {
    const r = await new Receiver(respond).start();
    receivers.push(r);
    return r;
  }
  after(async () => {
    for (const r of receivers) await r.stop();
  });

  it('signs with Standard Webhooks: the standardwebhooks library verifies headers and body', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const { eventId, outcomes } = await emitAndDeliver(s.agent.agent.id, { data: { followerHandle: '@fan' } });
    // The fan-out makes the first attempt itself: no delivery job is queued for it.
    expect(outcomes).to.deep.equal(['succeeded']);
    const ids = await deliveryIdsOf(s.webhook.id);
    expect(await takeJobs('webhook_deliver', (p) => ids.has(p.deliveryId))).to.deep.equal([]);
    expect(rx.received).to.have.length(1);
    const got = rx.received[0];
    expect(got.headers['webhook-id']).to.equal(eventId);
    expect(got.headers['webhook-timestamp']).to.match(/^\d{10}$/);
    expect(got.headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(got.headers['content-type']).to.equal('application/json');
    const verified = new Webhook(s.webhook.secret).verify(got.body, got.headers as Record<string, string>) as any;
    expect(verified.type).to.equal('agent.followed');
    expect(new Date(verified.timestamp).toISOString()).to.equal(verified.timestamp);
    expect(verified.data).to.deep.equal({ agentId: s.agent.agent.id, followerHandle: '@fan' });
    // A tampered body or another secret does not verify.
    expect(() =>
      new Webhook(s.webhook.secret).verify(got.body.replace('@fan', '@eve'), got.headers as Record<string, string>),
    ).to.throw();
    const other = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(() => new Webhook(other).verify(got.body, got.headers as Record<string, string>)).to.throw();

    const d = await api('GET', `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}/deliveries`, {
      session: s.owner.session,
    });
    expect(d.status).to.equal(200);
    expect(d.body.data).to.have.length(1);
    expect(d.body.data[0]).to.include({
      eventId,
      type: 'agent.followed',
      attempt: 1,
      status: 'succeeded',
      responseCode: 204,
      nextAttemptAt: null,
    });
    expect(d.body.data[0].latencyMs).to.be.a('number');
  });

  it('only enabled webhooks subscribed to the event type get a delivery, one per (event, webhook)', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url(), ['post.commented']);
    const second = await api('POST', `/owner/agents/${s.agent.agent.id}/webhooks`, {
      session: s.owner.session,
      body: { url: rx.url('/b'), events: ['agent.followed', 'post.commented'] },
    });
    const third = await api('POST', `/owner/agents/${s.agent.agent.id}/webhooks`, {
      session: s.owner.session,
      body: { url: rx.url('/c') },
    });
    await api('PATCH', `/owner/agents/${s.agent.agent.id}/webhooks/${third.body.data.id}`, {
      session: s.owner.session,
      body: { enabled: false },
    });
    const ctx = await getContext();
    const eventId = await emitAndFanout(s.agent.agent.id, 'agent.followed');
    const rows = await ctx.db('webhook_deliveries').where({ event_id: eventId });
    expect(rows.map((r) => r.webhook_id)).to.deep.equal([second.body.data.id]);
    expect(rows[0]).to.include({ status: 'succeeded', step: 1, attempts: 1 });
    expect(rx.received.map((r) => r.url)).to.deep.equal(['/b']);
    // Rerunning the fan-out (a crash after its attempts were recorded) creates and sends nothing twice.
    const ev = await ctx.db('webhook_events').where({ id: eventId }).first();
    const again = await fanoutEvent(ctx.deps, {
      eventId,
      type: 'agent.followed',
      agentId: s.agent.agent.id,
      data: {},
      occurredAt: ev.occurred_at.toISOString(),
    });
    expect(again).to.deep.equal([]);
    expect(await ctx.db('webhook_deliveries').where({ event_id: eventId })).to.have.length(1);
    expect(rx.received).to.have.length(1);
    // Another agent's events reach none of these webhooks.
    const other = await ownerAgentWebhook(rx.url('/x'));
    const otherEvent = await emitAndFanout(other.agent.agent.id, 'post.commented');
    expect(await ctx.db('webhook_deliveries').where({ event_id: otherEvent }).pluck('webhook_id')).to.deep.equal([
      other.webhook.id,
    ]);
  });

  it('the fan-out attempts every webhook of the event at once and records each: a failure gets its retry job, a success none', async () => {
    const rx = await receiver((_n, q, res) => res.writeHead(q.url === '/down' ? 503 : 204).end());
    const s = await ownerAgentWebhook(rx.url('/up'));
    const down = await api('POST', `/owner/agents/${s.agent.agent.id}/webhooks`, {
      session: s.owner.session,
      body: { url: rx.url('/down') },
    });
    const clock = await clockDeps();
    const ctx = await getContext();
    const { eventId, outcomes } = await emitAndDeliver(s.agent.agent.id, { deps: clock.deps });
    expect([...outcomes].sort()).to.deep.equal(['retrying', 'succeeded']);
    expect(rx.received.map((r) => r.url).sort()).to.deep.equal(['/down', '/up']);
    for (const r of rx.received) expect(r.headers['webhook-id']).to.equal(eventId);
    const rows = await ctx.db('webhook_deliveries').where({ event_id: eventId });
    const byHook = Object.fromEntries(rows.map((r) => [r.webhook_id, r]));
    expect(byHook[s.webhook.id]).to.include({ status: 'succeeded', step: 1, attempts: 1, response_code: 204 });
    expect(byHook[s.webhook.id].next_attempt_at).to.equal(null);
    expect(byHook[down.body.data.id]).to.include({ status: 'pending', step: 1, attempts: 1, response_code: 503 });
    expect(byHook[down.body.data.id].next_attempt_at.getTime()).to.equal(clock.now().getTime() + RETRY_DELAYS_MS[0]);
    const attempts = await ctx
      .db('webhook_delivery_attempts')
      .whereIn(
        'delivery_id',
        rows.map((r) => r.id),
      )
      .select('delivery_id', 'token', 'attempt', 'ok', 'response_code');
    expect(attempts).to.have.length(2);
    for (const a of attempts) expect(a).to.include({ token: 'step:1', attempt: 1, ok: a.response_code === 204 });
    const jobs = await takeJobs('webhook_deliver', (p) => rows.some((r) => r.id === p.deliveryId));
    expect(jobs.map((j) => j.payload)).to.deep.equal([{ deliveryId: byHook[down.body.data.id].id, step: 2 }]);
    expect(new Date(jobs[0].run_at).getTime()).to.equal(clock.now().getTime() + RETRY_DELAYS_MS[0]);
    const w = await ctx.db('webhooks').where({ id: s.webhook.id }).first();
    expect(w.last_success_at.getTime()).to.equal(clock.now().getTime());
  });

  it("a slow receiver does not hold back the record of the event's other deliveries", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    const rx = await receiver((_n, q, res) => {
      if (q.url === '/slow') void held.then(() => res.writeHead(204).end());
      else res.writeHead(204).end();
    });
    const s = await ownerAgentWebhook(rx.url('/fast'));
    const slow = await api('POST', `/owner/agents/${s.agent.agent.id}/webhooks`, {
      session: s.owner.session,
      body: { url: rx.url('/slow') },
    });
    const ctx = await getContext();
    const eventId = await ctx.db.transaction((trx) =>
      emitEvent(trx, { type: 'agent.followed', agentId: s.agent.agent.id, data: {} }),
    );
    const [job] = await takeJobs('event_fanout', (p) => p.eventId === eventId);
    const fanout = fanoutEvent(ctx.deps, job.payload);
    // The fast delivery is recorded while the slow receiver still holds its request.
    for (let i = 0; i < 400; i++) {
      if (await ctx.db('webhook_deliveries').where({ event_id: eventId, webhook_id: s.webhook.id }).first()) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const rows = await ctx.db('webhook_deliveries').where({ event_id: eventId });
    expect(rows.map((r) => [r.webhook_id, r.status])).to.deep.equal([[s.webhook.id, 'succeeded']]);
    expect(rx.received.map((r) => r.url).sort()).to.deep.equal(['/fast', '/slow']);
    release();
    expect(await fanout).to.deep.equal(['succeeded', 'succeeded']);
    expect(
      await ctx.db('webhook_deliveries').where({ event_id: eventId, webhook_id: slow.body.data.id }),
    ).to.have.length(1);
  });

  it('a fan-out that died before recording its attempts sends them again when rerun, and records each attempt once', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const ctx = await getContext();
    const eventId = await ctx.db.transaction((trx) =>
      emitEvent(trx, { type: 'agent.followed', agentId: s.agent.agent.id, data: {} }),
    );
    const [job] = await takeJobs('event_fanout', (p) => p.eventId === eventId);
    // The first run found the webhook and sent the request, then the worker died: nothing recorded.
    const [pending] = await pendingWebhooks(ctx.deps, [job.payload]);
    expect(pending.map((t) => t.webhookId)).to.deep.equal([s.webhook.id]);
    await sendAttempt(ctx.deps, pending[0]);
    expect(await ctx.db('webhook_deliveries').where({ event_id: eventId })).to.have.length(0);
    // The rerun sends it again and records it; another rerun sends nothing.
    expect(await fanoutEvent(ctx.deps, job.payload)).to.deep.equal(['succeeded']);
    expect(await fanoutEvent(ctx.deps, job.payload)).to.deep.equal([]);
    expect(rx.received.map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId]);
    expect(rx.received[1].body).to.equal(rx.received[0].body);
    const d = await ctx.db('webhook_deliveries').where({ event_id: eventId }).first();
    expect(d).to.include({ status: 'succeeded', step: 1, attempts: 1 });
    expect(await ctx.db('webhook_delivery_attempts').where({ delivery_id: d.id })).to.have.length(1);
    // Recording the same first attempt again (a rerun racing a late record) changes nothing.
    const again = await recordFirstAttempts(ctx.deps, [
      {
        event: job.payload,
        webhookId: s.webhook.id,
        result: { ok: false, responseCode: 500, latencyMs: 1, error: 'HTTP 500' },
      },
    ]);
    expect(again).to.deep.equal(['skipped']);
    expect(await ctx.db('webhook_deliveries').where({ id: d.id }).first()).to.include({
      status: 'succeeded',
      attempts: 1,
    });
    expect(await ctx.db('webhook_delivery_attempts').where({ delivery_id: d.id })).to.have.length(1);
  });

  it('a webhook deleted while its first attempt was in flight is left out of the record; the others are recorded', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url('/a'));
    const gone = await api('POST', `/owner/agents/${s.agent.agent.id}/webhooks`, {
      session: s.owner.session,
      body: { url: rx.url('/gone') },
    });
    const ctx = await getContext();
    const eventId = await ctx.db.transaction((trx) =>
      emitEvent(trx, { type: 'agent.followed', agentId: s.agent.agent.id, data: {} }),
    );
    const [job] = await takeJobs('event_fanout', (p) => p.eventId === eventId);
    const ok = { ok: true, responseCode: 204, latencyMs: 1, error: null };
    await api('DELETE', `/owner/agents/${s.agent.agent.id}/webhooks/${gone.body.data.id}`, {
      session: s.owner.session,
    });
    const out = await recordFirstAttempts(ctx.deps, [
      { event: job.payload, webhookId: gone.body.data.id, result: ok },
      { event: job.payload, webhookId: s.webhook.id, result: ok },
    ]);
    expect(out).to.deep.equal(['skipped', 'succeeded']);
    expect(await ctx.db('webhook_deliveries').where({ event_id: eventId }).pluck('webhook_id')).to.deep.equal([
      s.webhook.id,
    ]);
  });

  it("the record's asynchronous commit is its own: visible at once, and the pooled connection it ran on still commits synchronously", async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const ctx = await getContext();
    // One connection, so the record and the next statements share it.
    const one = createDb(ctx.databaseUrl, 1);
    try {
      const deps = { ...ctx.deps, db: one, query: createQuery(one) };
      const event = {
        eventId: 'evt_' + crypto.randomUUID().replace(/-/g, ''),
        type: 'agent.followed',
        agentId: s.agent.agent.id,
        data: {},
        occurredAt: new Date().toISOString(),
      };
      const ok = { ok: true, responseCode: 204, latencyMs: 1, error: null };
      expect(await recordFirstAttempts(deps, [{ event, webhookId: s.webhook.id, result: ok }])).to.deep.equal([
        'succeeded',
      ]);
      // Seen at once by other connections (an asynchronous commit is visible when it returns).
      expect(await ctx.db('webhook_deliveries').where({ event_id: event.eventId })).to.have.length(1);
      expect((await one.raw('show synchronous_commit')).rows[0].synchronous_commit).to.equal('on');
    } finally {
      await one.destroy();
    }
  });

  it('one read finds, for each of several events, the webhooks it still has to reach', async () => {
    const rx = await receiver();
    const a = await ownerAgentWebhook(rx.url('/a1'));
    const a2 = await api('POST', `/owner/agents/${a.agent.agent.id}/webhooks`, {
      session: a.owner.session,
      body: { url: rx.url('/a2'), events: ['agent.followed'] },
    });
    const b = await ownerAgentWebhook(rx.url('/b'), ['post.commented']);
    const ctx = await getContext();
    const at = new Date().toISOString();
    const ev = (agentId: string, type: string) => ({
      eventId: 'evt_' + crypto.randomUUID().replace(/-/g, ''),
      type,
      agentId,
      data: {},
      occurredAt: at,
    });
    const followed = ev(a.agent.agent.id, 'agent.followed');
    const mentioned = ev(a.agent.agent.id, 'agent.mentioned');
    const otherType = ev(b.agent.agent.id, 'agent.followed');
    const half = ev(a.agent.agent.id, 'agent.followed');
    // `half` already has its first attempt to /a1 recorded.
    await recordFirstAttempts(ctx.deps, [
      { event: half, webhookId: a.webhook.id, result: { ok: true, responseCode: 204, latencyMs: 1, error: null } },
    ]);
    const got = await pendingWebhooks(ctx.deps, [followed, mentioned, otherType, half]);
    const hooks = got.map((ts) => ts.map((t) => t.webhookId).sort());
    expect(hooks).to.deep.equal([[a.webhook.id, a2.body.data.id].sort(), [a.webhook.id], [], [a2.body.data.id]]);
    for (const [i, e] of [followed, mentioned, otherType, half].entries())
      for (const t of got[i]) {
        expect(t.eventId).to.equal(e.eventId);
        expect(t.payload).to.deep.equal({ type: e.type, timestamp: at, data: { agentId: e.agentId } });
      }
  });

  it('records of some events and the read of others in one statement: each gets what the statements alone give', async () => {
    const rx = await receiver();
    const a = await ownerAgentWebhook(rx.url('/a'));
    const b = await ownerAgentWebhook(rx.url('/b'));
    const ctx = await getContext();
    const at = new Date().toISOString();
    const ev = (agentId: string) => ({
      eventId: 'evt_' + crypto.randomUUID().replace(/-/g, ''),
      type: 'agent.followed',
      agentId,
      data: { n: 1 },
      occurredAt: at,
    });
    const recorded = ev(a.agent.agent.id);
    const failed = ev(b.agent.agent.id);
    const read = [ev(b.agent.agent.id), ev(a.agent.agent.id)];
    const ok = { ok: true, responseCode: 204, latencyMs: 1, error: null };
    const { sql, value } = await queries(() =>
      recordAndReadPending(
        ctx.deps,
        [
          { event: recorded, webhookId: a.webhook.id, result: ok },
          {
            event: failed,
            webhookId: b.webhook.id,
            result: { ok: false, responseCode: 500, latencyMs: 2, error: 'HTTP 500' },
          },
        ],
        read,
      ),
    );
    expect(sql).to.have.length(1);
    expect(value.outcomes).to.deep.equal(['succeeded', 'retrying']);
    expect(value.pending).to.deep.equal(await pendingWebhooks(ctx.deps, read));
    expect(value.pending.map((ts) => ts.map((t) => t.webhookId))).to.deep.equal([[b.webhook.id], [a.webhook.id]]);
    expect(value.pending[0][0]).to.include({ eventId: read[0].eventId, url: rx.url('/b'), previousSecretUntil: null });
    expect(value.pending[0][0].payload).to.deep.equal({
      type: 'agent.followed',
      timestamp: at,
      data: { agentId: b.agent.agent.id, n: 1 },
    });
    const d = await ctx
      .db('webhook_deliveries')
      .whereIn('event_id', [recorded.eventId, failed.eventId])
      .orderBy('status');
    expect(d.map((r) => [r.event_id, r.status, r.attempts])).to.deep.equal([
      [failed.eventId, 'pending', 1],
      [recorded.eventId, 'succeeded', 1],
    ]);
    expect(
      await ctx.db('webhook_delivery_attempts').whereIn(
        'delivery_id',
        d.map((r) => r.id),
      ),
    ).to.have.length(2);
    // Recorded again with a read: skipped, as the record alone skips it.
    const again = await recordAndReadPending(
      ctx.deps,
      [{ event: recorded, webhookId: a.webhook.id, result: ok }],
      [recorded],
    );
    expect(again).to.deep.equal({ outcomes: ['skipped'], pending: [[]] });
  });

  it('fan-outs running at the same time record their attempts together, each event and delivery once', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url('/a'));
    await api('POST', `/owner/agents/${s.agent.agent.id}/webhooks`, {
      session: s.owner.session,
      body: { url: rx.url('/b') },
    });
    const ctx = await getContext();
    const clock = await clockDeps();
    const jobs = [];
    for (let i = 0; i < 12; i++) {
      const eventId = await ctx.db.transaction((trx) =>
        emitEvent(trx, { type: 'agent.followed', agentId: s.agent.agent.id, data: { i } }),
      );
      jobs.push(...(await takeJobs('event_fanout', (p) => p.eventId === eventId)));
    }
    const outcomes = await Promise.all(jobs.map((j) => fanoutEvent(clock.deps, j.payload)));
    expect(outcomes.flat()).to.deep.equal(Array(24).fill('succeeded'));
    expect(rx.received).to.have.length(24);
    const ids = jobs.map((j) => j.payload.eventId);
    const rows = await ctx.db('webhook_deliveries').whereIn('event_id', ids);
    expect(rows).to.have.length(24);
    for (const r of rows) expect(r).to.include({ status: 'succeeded', step: 1, attempts: 1 });
    expect(await ctx.db('webhook_events').whereIn('id', ids)).to.have.length(12);
    expect(
      await ctx.db('webhook_delivery_attempts').whereIn(
        'delivery_id',
        rows.map((r) => r.id),
      ),
    ).to.have.length(24);
  });

  it('a receiver failing twice then succeeding gets the event on the third attempt with the same webhook-id', async () => {
    const rx = await receiver((n, _q, res) => res.writeHead(n <= 2 ? 503 : 200).end('ok'));
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    const first = await emitAndDeliver(s.agent.agent.id, {
      type: 'agent.mentioned',
      data: { mentionedHandle: '@p1' },
      deps: clock.deps,
    });
    const eventId = first.eventId;
    const ids = await deliveryIdsOf(s.webhook.id);
    const ctx = await getContext();

    expect(first.outcomes).to.deep.equal(['retrying']);
    let d = await ctx
      .db('webhook_deliveries')
      .whereIn('id', [...ids])
      .first();
    expect(d).to.include({ status: 'pending', attempts: 1, response_code: 503 });
    expect(d.next_attempt_at.getTime()).to.equal(clock.now().getTime() + RETRY_DELAYS_MS[0]);
    // The next attempt is its own job scheduled at next_attempt_at, not graphile's backoff.
    const [queued] = (
      await ctx.db.raw(
        `select j.run_at, j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'webhook_deliver' and j.payload->>'deliveryId' = ?`,
        [d.id],
      )
    ).rows;
    expect(queued.payload).to.deep.equal({ deliveryId: d.id, step: 2 });
    expect(new Date(queued.run_at).getTime()).to.equal(d.next_attempt_at.getTime());

    clock.advance(RETRY_DELAYS_MS[0]);
    expect(await runDueDeliveries(clock.deps, ids)).to.deep.equal(['retrying']);
    d = await ctx
      .db('webhook_deliveries')
      .whereIn('id', [...ids])
      .first();
    expect(d.next_attempt_at.getTime()).to.equal(clock.now().getTime() + RETRY_DELAYS_MS[1]);
    clock.advance(RETRY_DELAYS_MS[1]);
    // Failed deliveries before this one: the success resets the webhook's count.
    await ctx.db('webhooks').where({ id: s.webhook.id }).update({ consecutive_failures: 3 });
    expect(await runDueDeliveries(clock.deps, ids)).to.deep.equal(['succeeded']);
    const w = await ctx.db('webhooks').where({ id: s.webhook.id }).first();
    expect(w.consecutive_failures).to.equal(0);
    expect(w.last_success_at.getTime()).to.equal(clock.now().getTime());
    expect(await takeJobs('webhook_deliver', (p) => ids.has(p.deliveryId)), 'no attempt after a success').to.deep.equal(
      [],
    );

    expect(rx.received).to.have.length(3);
    expect(rx.received.map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId, eventId]);
    // Each attempt is signed afresh with its own timestamp.
    const ts = rx.received.map((r) => Number(r.headers['webhook-timestamp']));
    expect(ts[1] - ts[0]).to.equal(RETRY_DELAYS_MS[0] / 1000);
    for (const r of rx.received) expect(r.body).to.equal(rx.received[0].body);
    d = await ctx
      .db('webhook_deliveries')
      .whereIn('id', [...ids])
      .first();
    expect(d).to.include({ status: 'succeeded', attempts: 3, response_code: 200, next_attempt_at: null });
    const attempts = await ctx.db('webhook_delivery_attempts').where({ delivery_id: d.id }).orderBy('attempt');
    expect(attempts.map((a) => [a.attempt, a.ok, a.response_code])).to.deep.equal([
      [1, false, 503],
      [2, false, 503],
      [3, true, 200],
    ]);
    for (const a of attempts) expect(a.latency_ms).to.be.a('number');
    // A duplicate run of an already-recorded step sends nothing more.
    expect(await deliverOnce(clock.deps, { deliveryId: d.id, step: 3 })).to.equal('skipped');
    expect(rx.received).to.have.length(3);
  });

  it('an always-failing receiver: 8 attempts on the schedule, then failed; 5 failed deliveries disable the webhook and notify the owner', async () => {
    const rx = await receiver((_n, _q, res) => res.writeHead(500).end());
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    const ctx = await getContext();
    for (let e = 1; e <= 5; e++) {
      const outcomes: string[] = [
        ...(await emitAndDeliver(s.agent.agent.id, { type: 'post.commented', data: { n: e }, deps: clock.deps }))
          .outcomes,
      ];
      const ids = await deliveryIdsOf(s.webhook.id);
      for (let i = 0; i < RETRY_DELAYS_MS.length; i++) {
        clock.advance(RETRY_DELAYS_MS[i]);
        outcomes.push(...(await runDueDeliveries(clock.deps, ids)));
      }
      expect(outcomes).to.deep.equal([...Array(MAX_ATTEMPTS - 1).fill('retrying'), 'failed']);
      const w = await ctx.db('webhooks').where({ id: s.webhook.id }).first();
      expect(w.consecutive_failures).to.equal(e);
      expect(w.enabled).to.equal(e < 5);
    }
    expect(rx.received).to.have.length(5 * MAX_ATTEMPTS);
    const list = await api('GET', `/owner/agents/${s.agent.agent.id}/webhooks`, { session: s.owner.session });
    expect(list.body.data[0].enabled).to.equal(false);
    const n = await api('GET', '/notifications', { session: s.owner.session });
    expect(n.body.data.unreadCount).to.equal(1);
    expect(n.body.data.items[0]).to.include({
      type: 'webhook_disabled',
      href: `/dashboard/agents/${s.agent.agent.id}`,
      readAt: null,
    });
    expect(n.body.data.items[0].data).to.include({
      handle: '@' + s.agent.handle,
      webhookId: s.webhook.id,
      category: null,
      week: null,
      rank: null,
    });
    // A disabled webhook receives no new events.
    const ev = await emitAndFanout(s.agent.agent.id, 'post.commented');
    expect(await ctx.db('webhook_deliveries').where({ event_id: ev })).to.have.length(0);
    // Re-enabling resets the failure count.
    const re = await api('PATCH', `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}`, {
      session: s.owner.session,
      body: { enabled: true },
    });
    expect(re.body.data.enabled).to.equal(true);
    expect((await ctx.db('webhooks').where({ id: s.webhook.id }).first()).consecutive_failures).to.equal(0);
  });

  it('a success within 24 h keeps the webhook enabled after 5 failed deliveries; any success resets the count', async () => {
    const rx = await receiver((_n, _q, res) => res.writeHead(500).end());
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    const ctx = await getContext();
    await ctx
      .db('webhooks')
      .where({ id: s.webhook.id })
      .update({ consecutive_failures: 4, last_success_at: new Date(clock.now().getTime() - 3600_000) });
    await emitAndFanout(s.agent.agent.id);
    const ids = await deliveryIdsOf(s.webhook.id);
    await ctx
      .db('webhook_deliveries')
      .whereIn('id', [...ids])
      .update({ step: MAX_ATTEMPTS - 1 });
    await takeJobs('webhook_deliver', (p) => ids.has(p.deliveryId));
    expect(await deliverOnce(clock.deps, { deliveryId: [...ids][0], step: MAX_ATTEMPTS })).to.equal('failed');
    let w = await ctx.db('webhooks').where({ id: s.webhook.id }).first();
    expect(w).to.include({ consecutive_failures: 5, enabled: true });
    rx.respond = (_n, _q, res) => res.writeHead(200).end();
    expect((await emitAndDeliver(s.agent.agent.id, { deps: clock.deps })).outcomes).to.deep.equal(['succeeded']);
    w = await ctx.db('webhooks').where({ id: s.webhook.id }).first();
    expect(w.consecutive_failures).to.equal(0);
  });

  it('redirects are not followed: a 3xx is a failed attempt and the target is never called', async () => {
    let targetHits = 0;
    const target = await receiver((_n, _q, res) => {
      targetHits++;
      res.writeHead(200).end();
    });
    const rx = await receiver((_n, _q, res) => res.writeHead(302, { location: target.url() }).end());
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    expect((await emitAndDeliver(s.agent.agent.id, { deps: clock.deps })).outcomes).to.deep.equal(['retrying']);
    expect(targetHits).to.equal(0);
    const d = await api('GET', `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}/deliveries`, {
      session: s.owner.session,
    });
    expect(d.body.data[0]).to.include({ status: 'pending', attempt: 1, responseCode: 302 });
    expect(d.body.data[0].nextAttemptAt).to.equal(new Date(clock.now().getTime() + RETRY_DELAYS_MS[0]).toISOString());
  });

  it('a receiver that does not answer in time is a failed attempt without a response code', async () => {
    const rx = await receiver(() => {
      /* never answers */
    });
    const r = await postWebhook({
      url: rx.url(),
      headers: {},
      body: '{}',
      guard: { allowPrivate: true },
      timeoutMs: 150,
    });
    expect(r.ok).to.equal(false);
    expect(r.responseCode).to.equal(null);
    expect(r.error).to.match(/timeout/);
    expect(r.latencyMs).to.be.within(140, 2000);
  });

  it('a refused connection is recorded as a failed attempt, the task does not throw', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    await rx.stop();
    receivers.splice(receivers.indexOf(rx), 1);
    const clock = await clockDeps();
    expect((await emitAndDeliver(s.agent.agent.id, { deps: clock.deps })).outcomes).to.deep.equal(['retrying']);
    const ctx = await getContext();
    const a = await ctx
      .db('webhook_delivery_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.webhook_id', s.webhook.id)
      .first('a.*');
    expect(a).to.include({ ok: false, response_code: null });
    expect(a.error).to.match(/ECONNREFUSED/);
  });

  it('after a rotation, deliveries carry signatures by the new and the replaced secret for 24 h, then by the new one only', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const base = `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}`;
    const before = Date.now();
    const rot = await api('POST', `${base}/rotate-secret`, { session: s.owner.session });
    expect(rot.status).to.equal(200);
    const until = Date.parse(rot.body.data.previousSecretValidUntil);
    expect(until - before).to.be.within(ROTATION_OVERLAP_MS - 1000, ROTATION_OVERLAP_MS + 5000);
    const { db } = await getContext();
    const row = await db('webhooks').where({ id: s.webhook.id }).first('secret_enc', 'previous_secret_enc');
    expect(JSON.stringify(row))
      .to.not.include(s.webhook.secret.slice(6, 20))
      .and.not.include(rot.body.data.secret.slice(6, 20));

    const clock = await clockDeps();
    expect((await emitAndDeliver(s.agent.agent.id, { deps: clock.deps })).outcomes).to.deep.equal(['succeeded']);
    const during = rx.received[0];
    expect(String(during.headers['webhook-signature']).split(' ')).to.have.length(2);
    // A receiver still on the old secret and one already on the new secret both verify.
    for (const secret of [s.webhook.secret, rot.body.data.secret]) {
      expect(
        () => new Webhook(secret).verify(during.body, during.headers as Record<string, string>),
        secret,
      ).to.not.throw();
    }

    clock.advance(until - clock.now().getTime() + 1);
    expect((await emitAndDeliver(s.agent.agent.id, { deps: clock.deps })).outcomes).to.deep.equal(['succeeded']);
    const after = rx.received[1];
    const ts = after.headers['webhook-timestamp'];
    const sign = (secret: string) =>
      'v1,' +
      crypto
        .createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(`${after.headers['webhook-id']}.${ts}.${after.body}`)
        .digest('base64');
    expect(after.headers['webhook-signature']).to.equal(sign(rot.body.data.secret));
  });

  it('a replaced secret sealed under a former SESSION_SECRET is left out of the signatures, not a failed delivery', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const base = `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}`;
    const rot = await api('POST', `${base}/rotate-secret`, { session: s.owner.session });
    expect(rot.status).to.equal(200);
    const { db } = await getContext();
    await db('webhooks')
      .where({ id: s.webhook.id })
      .update({
        previous_secret_enc: encryptSecret('a former session secret, 32+ chars long', s.webhook.id, s.webhook.secret),
      });
    const clock = await clockDeps();
    expect((await emitAndDeliver(s.agent.agent.id, { deps: clock.deps })).outcomes).to.deep.equal(['succeeded']);
    const got = rx.received[0];
    expect(String(got.headers['webhook-signature']).split(' ')).to.have.length(1);
    expect(() =>
      new Webhook(rot.body.data.secret).verify(got.body, got.headers as Record<string, string>),
    ).to.not.throw();
  });

  it('redeliver replays a past delivery with the same webhook-id and a fresh signature', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    const { eventId } = await emitAndDeliver(s.agent.agent.id, { deps: clock.deps });
    const ids = await deliveryIdsOf(s.webhook.id);
    const deliveryId = [...ids][0];
    const base = `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}`;
    // Rotating the secret: the replay is signed with the new one.
    const rot = await api('POST', `${base}/rotate-secret`, { session: s.owner.session });
    expect(rot.status).to.equal(200);
    expect(rot.body.data.id).to.equal(s.webhook.id);
    expect(rot.body.data.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rot.body.data.secret).to.not.equal(s.webhook.secret);
    expect(rot.headers.get('cache-control')).to.equal('no-store');
    const r = await api('POST', `${base}/deliveries/${deliveryId}/redeliver`, { session: s.owner.session });
    expect(r.status).to.equal(202);
    expect(r.body.data).to.include({ id: deliveryId, eventId, status: 'succeeded' });
    clock.advance(60_000);
    expect(await runDueDeliveries(clock.deps, ids)).to.deep.equal(['redelivered']);
    expect(rx.received).to.have.length(2);
    const [first, replay] = rx.received;
    expect(replay.headers['webhook-id']).to.equal(eventId);
    expect(Number(replay.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp'])).to.equal(60);
    expect(replay.headers['webhook-signature']).to.not.equal(first.headers['webhook-signature']);
    expect(() =>
      new Webhook(rot.body.data.secret).verify(replay.body, replay.headers as Record<string, string>),
    ).to.not.throw();
    const list = await api('GET', `${base}/deliveries`, { session: s.owner.session });
    expect(list.body.data[0]).to.include({ attempt: 2, status: 'succeeded' });
    // Unknown delivery, another owner's delivery: 404.
    const unknown = await api('POST', `${base}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`, {
      session: s.owner.session,
    });
    expect(unknown.status).to.equal(404);
    const stranger = await ownerAgentWebhook(rx.url());
    const cross = await api(
      'POST',
      `/owner/agents/${stranger.agent.agent.id}/webhooks/${stranger.webhook.id}/deliveries/${deliveryId}/redeliver`,
      { session: stranger.owner.session },
    );
    expect(cross.status).to.equal(404);
    expect(cross.body.error.code).to.equal('NOT_FOUND');
  });

  it('redeliver on a disabled webhook is 409 WEBHOOK_DISABLED', async () => {
    const rx = await receiver();
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    await emitAndDeliver(s.agent.agent.id, { deps: clock.deps });
    const ids = await deliveryIdsOf(s.webhook.id);
    const base = `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}`;
    await api('PATCH', base, { session: s.owner.session, body: { enabled: false } });
    const r = await api('POST', `${base}/deliveries/${[...ids][0]}/redeliver`, { session: s.owner.session });
    expect(r.status).to.equal(409);
    expect(r.body.error.code).to.equal('WEBHOOK_DISABLED');
  });

  it('a pending retry of a webhook disabled meanwhile ends as failed without a request', async () => {
    const rx = await receiver((_n, _q, res) => res.writeHead(500).end());
    const s = await ownerAgentWebhook(rx.url());
    const clock = await clockDeps();
    await emitAndDeliver(s.agent.agent.id, { deps: clock.deps });
    const ids = await deliveryIdsOf(s.webhook.id);
    await api('PATCH', `/owner/agents/${s.agent.agent.id}/webhooks/${s.webhook.id}`, {
      session: s.owner.session,
      body: { enabled: false },
    });
    clock.advance(RETRY_DELAYS_MS[0]);
    expect(await runDueDeliveries(clock.deps, ids)).to.deep.equal(['webhook_disabled']);
    expect(rx.received).to.have.length(1);
    const ctx = await getContext();
    expect(
      (
        await ctx
          .db('webhook_deliveries')
          .whereIn('id', [...ids])
          .first()
      ).status,
    ).to.equal('failed');
  });

  it('retention drops finished deliveries past 30 days with their events, never pending ones', async () => {
    const rx = await receiver((n, _q, res) => res.writeHead(n === 1 ? 200 : 500).end());
    const s = await ownerAgentWebhook(rx.url());
    const ctx = await getContext();
    const done = await emitAndFanout(s.agent.agent.id);
    const pending = await emitAndFanout(s.agent.agent.id);
    const old = new Date(Date.now() - DELIVERY_RETENTION_MS - 60_000);
    await ctx.db('webhook_deliveries').where({ webhook_id: s.webhook.id }).update({ updated_at: old });
    await ctx.db('webhook_events').whereIn('id', [done, pending]).update({ created_at: old });
    const r = await pruneDeliveries(ctx.db, new Date());
    expect(r.deliveries).to.be.greaterThanOrEqual(1);
    const left = await ctx.db('webhook_deliveries').where({ webhook_id: s.webhook.id });
    expect(left.map((d) => [d.event_id, d.status])).to.deep.equal([[pending, 'pending']]);
    expect(await ctx.db('webhook_events').where({ id: done })).to.have.length(0);
    expect(await ctx.db('webhook_events').where({ id: pending })).to.have.length(1);
  });
});
