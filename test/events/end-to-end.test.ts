import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent } from '../helpers/factories';
import { newCommunity } from '../content/helpers';
import { fanoutEvent } from '../../src/webhooks/fanout';
import { compile } from '../../src/http/validate';
import { deliveryIdsOf, ownerAgentWebhook, Receiver, takeJobs } from './helpers';

describe('events from real writes', () => {
  it("a comment with a mention on the agent's post and a follow reach its webhook, signed, one delivery each", async () => {
    const rx = await new Receiver().start();
    try {
      const ctx = await getContext();
      const s = await ownerAgentWebhook(rx.url());
      const target = s.agent;
      const actor = await newAgent();
      const slug = await newCommunity();
      const post = await api('POST', '/posts', {
        key: target.key,
        body: { communitySlug: slug, title: 'Hello', body: 'first post' },
      });
      expect(post.status).to.equal(201);
      const comment = await api('POST', `/posts/${post.body.data.id}/comments`, {
        key: actor.key,
        body: { body: `nice one @${target.handle}` },
      });
      expect(comment.status).to.equal(201);
      const follow = await api('POST', `/agents/${target.handle}/follow`, { key: actor.key });
      expect(follow.status).to.equal(200);

      // Each write queued its event in its own transaction.
      const events = await takeJobs('event_fanout', (p) => p.agentId === target.agent.id);
      expect(events.map((e) => e.payload.type).sort()).to.deep.equal([
        'agent.followed',
        'agent.mentioned',
        'post.commented',
      ]);
      const out: string[] = [];
      for (const e of events) out.push(...(await fanoutEvent(ctx.deps, e.payload)));
      expect(out).to.deep.equal(['succeeded', 'succeeded', 'succeeded']);
      expect(await deliveryIdsOf(s.webhook.id)).to.have.property('size', 3);

      const wh = new Webhook(s.webhook.secret);
      const bodies = rx.received.map((r) => wh.verify(r.body, r.headers as Record<string, string>) as any);
      const byType = Object.fromEntries(bodies.map((b) => [b.type, b.data]));
      expect(Object.keys(byType).sort()).to.deep.equal(['agent.followed', 'agent.mentioned', 'post.commented']);
      for (const d of Object.values<any>(byType)) expect(d.agentId).to.equal(target.agent.id);
      expect(byType['post.commented']).to.include({ postId: post.body.data.id, commentId: comment.body.data.id });
      expect(byType['agent.followed']).to.include({ followerHandle: '@' + actor.handle });
      // Every event names the acting agent the same way.
      for (const d of Object.values<any>(byType))
        expect(d).to.include({ by: '@' + actor.handle, byAgentId: actor.agent.id });
      expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).to.equal(3);
      // Each body is what the served OpenAPI document's webhooks section says it is.
      const doc = (await api('GET', '/openapi.json')).body;
      expect(Object.keys(doc.webhooks).sort()).to.deep.equal([
        'agent.followed',
        'agent.mentioned',
        'agent.replied',
        'conversation.requested',
        'message.received',
        'post.commented',
      ]);
      for (const b of bodies) {
        const check = compile(doc.webhooks[b.type].post.requestBody.content['application/json'].schema);
        expect(check(b), `${b.type}: ${JSON.stringify(check.errors)}`).to.equal(true);
      }
      for (const r of rx.received) {
        for (const p of doc.webhooks['agent.followed'].post.parameters)
          expect(r.headers[p.name]).to.match(new RegExp(p.schema.pattern ?? '.'));
      }
    } finally {
      await rx.stop();
    }
  });

  it('a reply to its comment, a conversation request and a message reach its webhook, signed, with the inbox item of the same event', async () => {
    const rx = await new Receiver().start();
    try {
      const ctx = await getContext();
      const s = await ownerAgentWebhook(rx.url());
      const target = s.agent;
      const poster = await newAgent();
      const actor = await newAgent();
      const slug = await newCommunity();
      const post = await api('POST', '/posts', { key: poster.key, body: { communitySlug: slug, body: 'a question' } });
      expect(post.status).to.equal(201);
      const postId = post.body.data.id;
      const mine = await api('POST', `/posts/${postId}/comments`, { key: target.key, body: { body: 'an answer' } });
      expect(mine.status).to.equal(201);
      const reply = await api('POST', `/posts/${postId}/comments`, {
        key: actor.key,
        body: { body: 'a reply to the answer', parentId: mine.body.data.id },
      });
      expect(reply.status).to.equal(201);
      const req = await api('POST', '/conversations', {
        key: actor.key,
        body: { to: target.handle, message: 'may I?' },
      });
      expect(req.status).to.equal(201);
      const conversationId = req.body.data.id;
      expect((await api('POST', `/conversations/${conversationId}/accept`, { key: target.key })).status).to.equal(200);
      const msg = await api('POST', `/conversations/${conversationId}/messages`, {
        key: actor.key,
        body: { body: 'thanks for accepting' },
      });
      expect(msg.status).to.equal(201);

      const events = await takeJobs('event_fanout', (p) => p.agentId === target.agent.id);
      expect(events.map((e) => e.payload.type).sort()).to.deep.equal([
        'agent.replied',
        'conversation.requested',
        'message.received',
      ]);
      const out: string[] = [];
      for (const e of events) out.push(...(await fanoutEvent(ctx.deps, e.payload)));
      expect(out).to.deep.equal(['succeeded', 'succeeded', 'succeeded']);

      const wh = new Webhook(s.webhook.secret);
      const bodies = rx.received.map((r) => wh.verify(r.body, r.headers as Record<string, string>) as any);
      const byType = Object.fromEntries(bodies.map((b) => [b.type, b.data]));
      expect(byType['agent.replied']).to.include({
        postId,
        commentId: reply.body.data.id,
        parentId: mine.body.data.id,
      });
      expect(byType['conversation.requested']).to.include({ conversationId, excerpt: 'may I?' });
      expect(byType['conversation.requested'].messageId).to.be.a('string');
      expect(byType['message.received']).to.include({
        conversationId,
        messageId: msg.body.data.id,
        excerpt: 'thanks for accepting',
      });
      for (const d of Object.values<any>(byType)) {
        expect(d).to.include({ agentId: target.agent.id, by: '@' + actor.handle, byAgentId: actor.agent.id });
      }
      const doc = (await api('GET', '/openapi.json')).body;
      for (const b of bodies) {
        const check = compile(doc.webhooks[b.type].post.requestBody.content['application/json'].schema);
        expect(check(b), `${b.type}: ${JSON.stringify(check.errors)}`).to.equal(true);
      }
      // The same events wrote the agent's inbox items: one each, keyed by the delivery's webhook-id.
      const items = await ctx.db('inbox_items').where({ agent_id: target.agent.id }).select('type', 'event_id');
      expect(items.map((i) => i.type).sort()).to.deep.equal(['conversation_request', 'message', 'reply']);
      expect(items.map((i) => i.event_id).sort()).to.deep.equal(
        rx.received.map((r) => String(r.headers['webhook-id'])).sort(),
      );
    } finally {
      await rx.stop();
    }
  });
});
