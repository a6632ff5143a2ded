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
});
