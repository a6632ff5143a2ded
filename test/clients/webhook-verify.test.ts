import crypto from 'crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, signWebhook, WebhookVerificationError } from '../../clients/typescript/src';

const secret = 'whsec_' + crypto.randomBytes(32).toString('base64');

/** Signs the way a Standard Webhooks sender does, with the reference library. */
function signed(body: string, at = new Date(), id = 'msg_' + crypto.randomUUID()) {
  const signature = new Webhook(secret).sign(id, at, body);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

describe('clients/typescript: verifyWebhook (Standard Webhooks)', () => {
  const body = JSON.stringify({
    type: 'post.commented',
    timestamp: new Date().toISOString(),
    data: { postId: 'p1', commentId: 'c1' },
  });

  it('accepts a payload signed by the standardwebhooks library and returns the event with its id', () => {
    const h = signed(body);
    const ev = verifyWebhook(secret, h, body);
    expect(ev.type).to.equal('post.commented');
    expect(ev.data).to.deep.equal({ postId: 'p1', commentId: 'c1' });
    expect(ev.id).to.equal(h['webhook-id']);
    // Buffers, fetch Headers, mixed-case names and a rotated (second) signature work too.
    const headers = new Headers({
      'Webhook-Id': h['webhook-id'],
      'Webhook-Timestamp': h['webhook-timestamp'],
      'Webhook-Signature': `v1,AAAA ${h['webhook-signature']}`,
    });
    expect(verifyWebhook(secret, headers, Buffer.from(body)).id).to.equal(h['webhook-id']);
  });

  it('rejects a changed body, a wrong secret, missing headers and a non-v1 scheme', () => {
    const h = signed(body);
    expect(() => verifyWebhook(secret, h, body.replace('p1', 'p2'))).to.throw(WebhookVerificationError, /signature/);
    expect(() => verifyWebhook('whsec_' + crypto.randomBytes(32).toString('base64'), h, body)).to.throw(
      WebhookVerificationError,
    );
    expect(() => verifyWebhook(secret, { ...h, 'webhook-id': 'other' }, body)).to.throw(WebhookVerificationError);
    expect(() =>
      verifyWebhook(secret, { 'webhook-id': h['webhook-id'], 'webhook-timestamp': h['webhook-timestamp'] }, body),
    ).to.throw(WebhookVerificationError, /Missing/);
    expect(() =>
      verifyWebhook(secret, { ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') }, body),
    ).to.throw(WebhookVerificationError);
  });

  it('rejects timestamps outside the tolerance (replays) and accepts them inside it', () => {
    const old = new Date(Date.now() - 10 * 60 * 1000);
    const h = signed(body, old);
    expect(() => verifyWebhook(secret, h, body)).to.throw(WebhookVerificationError, /tolerance/);
    expect(verifyWebhook(secret, h, body, { toleranceSeconds: 900 }).type).to.equal('post.commented');
    expect(verifyWebhook(secret, h, body, { now: () => old }).type).to.equal('post.commented');
    expect(() => verifyWebhook(secret, { ...h, 'webhook-timestamp': 'yesterday' }, body)).to.throw(
      WebhookVerificationError,
    );
  });

  it('signWebhook produces what the standardwebhooks library verifies', () => {
    const id = 'msg_x';
    const ts = Math.floor(Date.now() / 1000);
    const sig = signWebhook(secret, id, ts, body);
    const ev = new Webhook(secret).verify(body, {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': sig,
    }) as any;
    expect(ev.type).to.equal('post.commented');
  });
});
