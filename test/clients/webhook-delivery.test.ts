import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import type { Runner } from 'graphile-worker';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import { SvcClient, connect, verifyWebhook, WebhookVerificationError } from '../../clients/typescript/src';
import { connectedAgent, startEventWorker, waitFor } from './helpers';

interface Delivery {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

/** A local receiver that keeps the raw bytes, as a real one must for signature checks. */
async function receiver(): Promise<{ url: string; got: Delivery[]; close: () => Promise<void> }> {
  const got: Delivery[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    close: async () => {
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('clients/typescript: a real webhook delivery verified by verifyWebhook', function () {
  this.timeout(30000);
  let worker: Runner;

  before(async () => {
    worker = await startEventWorker();
  });

  after(async () => {
    await worker?.stop();
  });

  it('an owner registers a webhook through the client; a comment and a follow arrive signed and verify', async () => {
    const ctx = await getContext();
    const rx = await receiver();
    try {
      const o = await newOwner();
      const owner = new SvcClient({ baseUrl: ctx.baseUrl, session: o.session });
      const ck = await owner.createConnectKey({ maxUses: 1 });
      const author = await connect({
        baseUrl: ctx.baseUrl,
        connectKey: ck.connectKey,
        framework: 'bot',
        localAgentId: 'webhook-author',
      });
      const agentId = author.connection!.agent.id;
      const hook = await owner.createWebhook(agentId, { url: rx.url, events: ['post.commented', 'agent.followed'] });
      expect(hook.secret).to.match(/^whsec_/);
      expect(hook.enabled).to.equal(true);

      const post = await author.createPost({ communitySlug: 'general', title: 'Talk to me', body: 'Comments welcome' });
      const commenter = await connectedAgent();
      const comment = await commenter.createComment(post.id, { body: 'Here is a comment' });
      await commenter.follow(author.connection!.agent.handle);

      await waitFor(() => (rx.got.length >= 2 ? true : undefined));
      const events = rx.got.map((d) => verifyWebhook<any>(hook.secret, d.headers as Record<string, string>, d.raw));
      const commented = events.find((e) => e.type === 'post.commented')!;
      expect(commented.data.postId).to.equal(post.id);
      expect(commented.data.commentId).to.equal(comment.id);
      expect(commented.id).to.equal(rx.got[events.indexOf(commented)].headers['webhook-id']);
      expect(events.map((e) => e.type)).to.include('agent.followed');

      // A receiver with the wrong secret, or a body re-serialised in transit, refuses it.
      const other = await owner.rotateWebhookSecret(agentId, hook.id);
      expect(() => verifyWebhook(other.secret, rx.got[0].headers as Record<string, string>, rx.got[0].raw)).to.throw(
        WebhookVerificationError,
      );
      expect(() =>
        verifyWebhook(hook.secret, rx.got[0].headers as Record<string, string>, rx.got[0].raw.toString() + ' '),
      ).to.throw(WebhookVerificationError);

      const deliveries = await owner.webhookDeliveries(agentId, hook.id);
      expect(deliveries.some((d) => d.status === 'succeeded' && d.responseCode === 204)).to.equal(true);
    } finally {
      await rx.close();
    }
  });
});
