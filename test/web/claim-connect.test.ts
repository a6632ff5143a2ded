import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { WebClient } from './client';

async function claimLink(key: string, handle: string): Promise<string> {
  const res = await api('POST', `/agents/${handle}/claim-token`, { key });
  expect(res.status).to.equal(201);
  return res.body.data.claimPath;
}

describe('web: claim page and connect keys', () => {
  it('shows the agent and asks an anonymous visitor to log in, with a way back to the link', async () => {
    const { key, handle } = await newAgent();
    const path = await claimLink(key, handle);
    expect(path).to.match(/^\/claim\?token=svc_claim_/);
    const page = await new WebClient().get(path);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('@' + handle);
    expect(page.text).to.include('data-testid="claim-login"');
    expect(page.text).to.include('/login?next=' + encodeURIComponent(path).replace(/%20/g, '+'));
  });

  it('redeems on confirm for a logged-in owner; the link is then used', async () => {
    const { key, handle, agent } = await newAgent();
    const path = await claimLink(key, handle);
    // The page embeds the token: never stored, even for a visitor not logged in.
    const anonymous = await new WebClient().get(path);
    expect(anonymous.status).to.equal(200);
    expect(anonymous.headers.get('cache-control')).to.equal('private, no-store');
    expect((await new WebClient().get('/login')).headers.get('cache-control'), 'a page without a token').to.equal(
      'no-cache',
    );
    const c = new WebClient();
    await c.signup();
    const page = await c.get(path);
    expect(page.text).to.include('data-testid="claim-confirm"');
    // Viewing the page does not spend the token.
    const { db } = await getContext();
    expect((await db('agents').where({ id: agent.id }).first()).owner_id).to.equal(null);
    const token = new URL('http://x' + path).searchParams.get('token')!;
    const noCsrf = await c.post('/claim', { token });
    expect(noCsrf.status).to.equal(403);
    const res = await c.post('/claim', { token, _csrf: await c.csrf() });
    expect(res.status).to.equal(200);
    expect(res.text).to.include(`You now own @${handle}`);
    const row = await db('agents').where({ id: agent.id }).first();
    expect(row.owner_id).to.be.a('string');
    expect((await c.get('/dashboard')).text).to.include('@' + handle);
    const me = await api('GET', '/me', { key });
    expect(me.body.data.ownerBound).to.equal(true);

    const again = await new WebClient().get(path);
    expect(again.status).to.equal(409);
    expect(again.text).to.include('already used');
    const other = new WebClient();
    await other.signup();
    const reuse = await other.post('/claim', { token, _csrf: await other.csrf() });
    expect(reuse.status).to.equal(409);
    expect(reuse.text).to.include('CLAIM_TOKEN_USED');
  });

  it('explains unknown, expired and missing tokens', async () => {
    const unknown = await new WebClient().get('/claim?token=svc_claim_nope');
    expect(unknown.status).to.equal(404);
    expect(unknown.text).to.include('not valid');

    const missing = await new WebClient().get('/claim');
    expect(missing.status).to.equal(400);

    const { key, handle } = await newAgent();
    const path = await claimLink(key, handle);
    const ctx = await getContext();
    ctx.setNow(new Date(Date.now() + 25 * 3600 * 1000));
    try {
      const expired = await new WebClient().get(path);
      expect(expired.status).to.equal(410);
      expect(expired.text).to.include('expired');
      expect(expired.text).to.include('@' + handle);
    } finally {
      ctx.setNow(null);
    }
  });

  it('lets a logged-out visitor log in and come back to confirm', async () => {
    const owner = new WebClient();
    const { email, password } = await owner.signup();
    const { key, handle } = await newAgent();
    const path = await claimLink(key, handle);
    const c = new WebClient();
    const login = await c.post('/login', { email, password, next: path });
    expect(login.location).to.equal(path);
    expect((await c.get(path)).text).to.include('data-testid="claim-confirm"');
  });

  it('creates a connect key shown once, exchanges it for an owned agent, and revokes it', async () => {
    const c = new WebClient();
    await c.signup();
    const csrf = await c.csrf();
    const bad = await c.post('/dashboard/connect-keys', { _csrf: csrf, maxUses: '11' });
    expect(bad.status).to.equal(400);
    const created = await c.post('/dashboard/connect-keys', { _csrf: csrf, maxUses: '2', runtimeLabel: 'laptop' });
    expect(created.status).to.equal(201);
    const connectKey = /data-testid="new-connect-key">([^<]+)</.exec(created.text)![1];
    expect(connectKey).to.match(/^svc_connect_/);
    const ex = await api('POST', '/connect/exchange', {
      body: { connectKey, framework: 'mcp', localAgentId: 'local-1', localDisplayName: 'Web Connected' },
    });
    expect(ex.status).to.equal(200);
    expect(ex.body.data.ownerBound).to.equal(true);
    const dash = await c.get('/dashboard');
    expect(dash.text).not.to.include(connectKey);
    expect(dash.text).to.include('1 / 2');
    expect(dash.text).to.include(ex.body.data.agent.handle);
    const id = /action="\/dashboard\/connect-keys\/([0-9a-f-]{36})\/revoke"/.exec(dash.text)![1];
    const rev = await c.post(`/dashboard/connect-keys/${id}/revoke`, { _csrf: csrf });
    expect(rev.location).to.equal('/dashboard?done=connect_key_revoked');
    const after = await api('POST', '/connect/exchange', {
      body: { connectKey, framework: 'mcp', localAgentId: 'local-2' },
    });
    expect(after.status).to.equal(403);
  });
});
