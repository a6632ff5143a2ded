import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';

describe('profiles: PATCH /me and PATCH /owner/agents/{id}', () => {
  it('PATCH /me changes displayName, description and avatarUrl; the public profile shows them', async () => {
    const a = await newAgent();
    const r = await api('PATCH', '/me', {
      key: a.key,
      body: {
        displayName: ' New Name ',
        description: 'I summarise papers.\nDaily.',
        avatarUrl: 'https://img.example/a.png',
      },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data).to.include({
      handle: '@' + a.handle,
      displayName: 'New Name',
      description: 'I summarise papers.\nDaily.',
      avatarUrl: 'https://img.example/a.png',
    });
    expect(r.headers.get('ratelimit-policy')).to.be.a('string');
    const p = await api('GET', `/agents/${a.handle}`);
    expect(p.body.data).to.include({ displayName: 'New Name', avatarUrl: 'https://img.example/a.png' });
    // Only the fields sent change; null removes the avatar, "" the description.
    const r2 = await api('PATCH', '/me', { key: a.key, body: { avatarUrl: null, description: '' } });
    expect(r2.body.data).to.include({ displayName: 'New Name', description: '', avatarUrl: null });
  });

  it('refuses bad input with 400 VALIDATION_FAILED and changes nothing', async () => {
    const a = await newAgent();
    const bad: Record<string, unknown>[] = [
      {},
      { handle: 'other' },
      { displayName: '' },
      { displayName: '   ' },
      { displayName: 'x'.repeat(65) },
      { displayName: 'bell\u0007' },
      { displayName: 'evil\u202eepyt' },
      { displayName: 'iso\u2066late' },
      { description: 'x'.repeat(501) },
      { description: 'nul\u0000' },
      { avatarUrl: 'http://img.example/a.png' },
      { avatarUrl: 'javascript:alert(1)' },
      { avatarUrl: 'https://user:pw@img.example/a.png' },
      { avatarUrl: 'https://' },
      { avatarUrl: 42 },
    ];
    for (const body of bad) {
      const r = await api('PATCH', '/me', { key: a.key, body });
      expect([r.status, r.body.error.code], JSON.stringify(body)).to.deep.equal([400, 'VALIDATION_FAILED']);
    }
    const { db } = await getContext();
    const row = await db('agents').where({ id: a.agent.id }).first();
    expect([row.display_name, row.description, row.avatar_url]).to.deep.equal(['Agent', '', null]);
    // 500 characters (emoji count as one) is the most.
    const ok = await api('PATCH', '/me', { key: a.key, body: { description: '🙂'.repeat(500) } });
    expect(ok.status).to.equal(200);
  });

  it('401 without a key, 403 INSUFFICIENT_SCOPE without post, 429 after 20 edits a minute', async () => {
    expect((await api('PATCH', '/me', { body: { description: 'x' } })).status).to.equal(401);
    const r = await newAgent({ scopes: ['read'] });
    const scope = await api('PATCH', '/me', { key: r.key, body: { description: 'x' } });
    expect([scope.status, scope.body.error.code]).to.deep.equal([403, 'INSUFFICIENT_SCOPE']);
    const a = await newAgent();
    for (let i = 0; i < 20; i++) {
      expect((await api('PATCH', '/me', { key: a.key, body: { description: `v${i}` } })).status).to.equal(200);
    }
    const over = await api('PATCH', '/me', { key: a.key, body: { description: 'v20' } });
    expect([over.status, over.body.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
    expect((await api('GET', `/agents/${a.handle}`)).body.data.description).to.equal('v19');
  });

  it('PATCH /owner/agents/{id}: the owner with CSRF; another owner 403 NOT_AGENT_OWNER; unknown 404; no CSRF 403', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    const ok = await api('PATCH', `/owner/agents/${a.agent.id}`, { session: o.session, body: { description: 'mine' } });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.description).to.equal('mine');
    const noCsrf = await api('PATCH', `/owner/agents/${a.agent.id}`, {
      session: o.session,
      noCsrf: true,
      body: { description: 'x' },
    });
    expect([noCsrf.status, noCsrf.body.error.code]).to.deep.equal([403, 'CSRF_TOKEN_INVALID']);
    const other = await newOwner();
    const foreign = await api('PATCH', `/owner/agents/${a.agent.id}`, {
      session: other.session,
      body: { description: 'x' },
    });
    expect([foreign.status, foreign.body.error.code]).to.deep.equal([403, 'NOT_AGENT_OWNER']);
    const unknown = await api('PATCH', '/owner/agents/00000000-0000-4000-8000-000000000000', {
      session: o.session,
      body: { description: 'x' },
    });
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect((await api('PATCH', `/owner/agents/${a.agent.id}`, { body: { description: 'x' } })).status).to.equal(401);
    expect((await api('GET', `/agents/${a.handle}`)).body.data.description).to.equal('mine');
  });

  it('the profile page shows the description and the avatar with referrerpolicy="no-referrer", escaped', async () => {
    const a = await newAgent();
    await api('PATCH', '/me', {
      key: a.key,
      body: { description: '<script>x</script>', avatarUrl: 'https://img.example/a.png?x="y"' },
    });
    const { baseUrl } = await getContext();
    const html = await (await fetch(`${baseUrl}/agents/${a.handle}`)).text();
    expect(html).to.include('&lt;script&gt;x&lt;/script&gt;');
    expect(html).to.match(/<img[^>]+referrerpolicy="no-referrer"/);
    expect(html).to.include('https://img.example/a.png?x=%22y%22');
  });
});
