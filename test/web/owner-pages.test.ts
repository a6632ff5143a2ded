import { expect } from 'chai';
import { POLICIES } from '../../src/limits/policy';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { uniq } from '../helpers/factories';
import { WebClient } from './client';

describe('web: owner pages (signup, login, dashboard, keys)', () => {
  it('serves pages with a strict CSP, frame denial and no inline script', async () => {
    const res = await new WebClient().get('/signup');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.include("default-src 'self'");
    expect(csp).to.include("script-src 'self'");
    expect(csp).to.include("frame-ancestors 'none'");
    expect(csp).not.to.include('unsafe-inline');
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    expect(res.text).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.to.match(/\son[a-z]+=/i);
    expect(res.text).not.to.match(/\sstyle=/i);
  });

  it('serves the script and stylesheet as cacheable static files', async () => {
    const c = new WebClient();
    const page = await c.get('/login');
    const js = /<script src="([^"]+)"/.exec(page.text)![1];
    const css = /<link rel="stylesheet" href="([^"]+)"/.exec(page.text)![1];
    const jsRes = await c.get(js);
    expect(jsRes.status).to.equal(200);
    expect(jsRes.headers.get('content-type')).to.match(/javascript/);
    expect(jsRes.text).to.include('data-copy');
    const cssRes = await c.get(css);
    expect(cssRes.headers.get('content-type')).to.match(/text\/css/);
    expect(cssRes.headers.get('cache-control')).to.include('immutable');
  });

  it('signs up, lands on the dashboard, and rejects bad or duplicate signups with a readable error', async () => {
    const c = new WebClient();
    const { email } = await c.signup();
    expect(c.cookies.get('svc_session')).to.be.a('string');
    const dash = await c.get('/dashboard');
    expect(dash.status).to.equal(200);
    expect(dash.text).to.include(email);
    expect(dash.text).to.include('data-testid="no-agents"');

    const short = await new WebClient().post('/signup', { email: 'x_' + email, password: 'short' });
    expect(short.status).to.equal(400);
    expect(short.text).to.include('password must NOT have fewer than 10 characters');
    expect(short.text).to.include('value="x_' + email + '"');

    const dup = await new WebClient().post('/signup', { email, password: 'another password 123' });
    expect(dup.status).to.equal(409);
    expect(dup.text).to.include('already exists');
  });

  it('logs in with redirect back to a same-site page only, and refuses wrong credentials', async () => {
    const a = new WebClient();
    const { email, password } = await a.signup();
    const c = new WebClient();
    const bad = await c.post('/login', { email, password: 'wrong password!!' });
    expect(bad.status).to.equal(401);
    expect(bad.text).to.include('Email or password is incorrect');
    expect(c.cookies.has('svc_session')).to.equal(false);

    const ok = await c.post('/login', { email, password, next: '/claim?token=abc' });
    expect(ok.status).to.equal(302);
    expect(ok.location).to.equal('/claim?token=abc');

    const evil = await new WebClient().post('/login', { email, password, next: '//evil.example/x' });
    expect(evil.location).to.equal('/dashboard');
  });

  it('limits logins per client address like the API (429 with Retry-After); failed attempts never count', async function () {
    this.timeout(60_000);
    const c = new WebClient();
    // 25 failures over five accounts: under the failed-login lock (tested next).
    for (let i = 0; i < 25; i++)
      expect(
        (await c.post('/login', { email: `nobody${i % 5}@example.test`, password: 'wrong password' })).status,
      ).to.equal(401);
    const { email, password } = await c.signup();
    for (let i = 1; i < POLICIES.auth_ip.perMinute; i++)
      expect((await c.post('/login', { email, password, next: '/dashboard' })).status, `login ${i}`).to.equal(302);
    const limited = await c.post('/login', { email, password });
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    // Another address is unaffected.
    expect((await new WebClient().post('/login', { email, password, next: '/dashboard' })).status).to.equal(302);
  });

  it('the login form shares the failed-login lock: after 10 failures for an account, the right password waits too', async () => {
    const { email, password } = await new WebClient().signup();
    const c = new WebClient();
    for (let i = 0; i < 10; i++)
      expect((await c.post('/login', { email, password: 'wrong password!!' })).status).to.equal(401);
    const locked = await c.post('/login', { email, password, next: '/dashboard' });
    expect(locked.status).to.equal(429);
    expect(Number(locked.headers.get('retry-after'))).to.be.within(890, 901);
    expect(c.cookies.has('svc_session')).to.equal(false);
    // The lock is per address: the owner elsewhere still logs in.
    expect((await new WebClient().post('/login', { email, password, next: '/dashboard' })).status).to.equal(302);
  });

  it('sends visitors without a session to the login page and back', async () => {
    const res = await new WebClient().get('/dashboard');
    expect(res.status).to.equal(302);
    expect(res.location).to.equal('/login?next=%2Fdashboard');
  });

  it('creates an agent only with the CSRF field, and reports a taken handle', async () => {
    const c = new WebClient();
    await c.signup();
    const handle = uniq('web');
    const noCsrf = await c.post('/dashboard/agents', { handle, displayName: 'Web Agent' });
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.text).to.include('CSRF_TOKEN_INVALID');

    const wrong = await c.post('/dashboard/agents', { handle, displayName: 'Web Agent', _csrf: 'forged' });
    expect(wrong.status).to.equal(403);

    const csrf = await c.csrf();
    const ok = await c.post('/dashboard/agents', { handle, displayName: 'Web Agent', _csrf: csrf });
    expect(ok.status).to.equal(302);
    expect(ok.location).to.match(/^\/dashboard\/agents\/[0-9a-f-]{36}\?done=agent_created$/);
    const dash = await c.get('/dashboard');
    expect(dash.text).to.include('@' + handle);

    const taken = await c.post('/dashboard/agents', {
      handle: handle.toUpperCase(),
      displayName: 'Again',
      _csrf: csrf,
    });
    expect(taken.status).to.equal(409);
    expect(taken.text).to.include(`The handle @${handle} is taken`);

    const invalid = await c.post('/dashboard/agents', { handle: 'x!', displayName: 'Bad', _csrf: csrf });
    expect(invalid.status).to.equal(400);
  });

  it('issues a key shown once with the chosen scopes, which then works on the API until revoked', async () => {
    const c = new WebClient();
    await c.signup();
    const csrf = await c.csrf();
    const created = await c.post('/dashboard/agents', { handle: uniq('keys'), displayName: 'Keyed', _csrf: csrf });
    const agentPath = created.location!.split('?')[0];

    const none = await c.post(agentPath + '/keys', { _csrf: csrf });
    expect(none.status).to.equal(400);
    expect(none.text).to.include('Choose at least one scope');

    const issued = await c.post(agentPath + '/keys', { _csrf: csrf, scopes: ['read', 'post'], label: 'ci' });
    expect(issued.status).to.equal(201);
    const key = /data-testid="new-key">([^<]+)</.exec(issued.text)![1];
    expect(key).to.match(/^svc_live_/);
    const me = await api('GET', '/me', { key });
    expect(me.status).to.equal(200);
    expect(me.body.data.apiKey.scopes).to.deep.equal(['read', 'post']);

    const again = await c.get(agentPath);
    expect(again.text).not.to.include(key);
    expect(again.text).to.include(key.slice(0, 17));
    const keyId = new RegExp(`action="${agentPath}/keys/([0-9a-f-]{36})/revoke"`).exec(again.text)![1];

    const revoked = await c.post(`${agentPath}/keys/${keyId}/revoke`, { _csrf: csrf });
    expect(revoked.status).to.equal(302);
    expect((await api('GET', '/me', { key })).status).to.equal(401);
    expect((await c.get(revoked.location!)).text).to.include('The key is revoked');
  });

  it("shows 403 for another owner's agent and 404 for malformed ids", async () => {
    const a = new WebClient();
    await a.signup();
    const created = await a.post('/dashboard/agents', {
      handle: uniq('mine'),
      displayName: 'Mine',
      _csrf: await a.csrf(),
    });
    const b = new WebClient();
    await b.signup();
    expect((await b.get(created.location!.split('?')[0])).status).to.equal(403);
    expect((await b.get('/dashboard/agents/not-a-uuid')).status).to.equal(404);
    expect((await b.get('/dashboard/agents/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    const { db } = await getContext();
    const keys = () =>
      db('api_keys')
        .where('agent_id', created.location!.split('?')[0].split('/').pop()!)
        .count({ n: '*' })
        .then((r) => Number(r[0].n));
    const before = await keys();
    const issue = await b.post(created.location!.split('?')[0] + '/keys', { _csrf: await b.csrf(), scopes: 'read' });
    expect(issue.status).to.equal(403);
    expect(await keys(), 'no key issued').to.equal(before);
  });

  it('logs out: the session is revoked server-side and the cookie cleared', async () => {
    const c = new WebClient();
    await c.signup();
    const cookie = c.cookies.get('svc_session')!;
    const csrf = await c.csrf();
    const out = await c.post('/logout', { _csrf: csrf });
    expect(out.status).to.equal(302);
    expect(c.cookies.has('svc_session')).to.equal(false);
    const stale = new WebClient();
    stale.cookies.set('svc_session', cookie);
    expect((await stale.get('/dashboard')).status).to.equal(302);
  });

  it('refuses form posts from another origin', async () => {
    const c = new WebClient();
    await c.signup();
    const res = await c.post(
      '/dashboard/agents',
      { handle: uniq('x'), displayName: 'X', _csrf: await c.csrf() },
      { origin: 'https://evil.example' },
    );
    expect(res.status).to.equal(403);
    expect(res.text).to.include('CROSS_ORIGIN_FORM');
  });

  it('answers unknown pages with an HTML 404 and leaves the API envelope alone', async () => {
    const page = await new WebClient().get('/no/such/page');
    expect(page.status).to.equal(404);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    const apiRes = await api('GET', '/api/v1/no-such-route');
    expect(apiRes.status).to.equal(404);
    expect(apiRes.body.error.code).to.equal('NOT_FOUND');
  });
});
