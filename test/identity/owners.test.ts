import { expect } from 'chai';
import { Writable } from 'stream';
import pino from 'pino';
import { getContext, testConfig } from '../helpers/context';
import { newAgent, newOwner, uniq } from '../helpers/factories';
import { ownServer, OwnServer, sessionCookieOf } from './server';
import { sessionCookieHeader } from '../../src/owners/cookie';
import { buildTaskList } from '../../jobs';
import { POLICIES } from '../../src/limits/policy';
import { MemoryLimiter } from '../../src/limits/memory';
import { openBody } from '../../src/owners/outbox';

const PASSWORD = 'a long enough password';

async function signupVia(s: OwnServer, email = `${uniq('o')}@example.test`) {
  const r = await s.call('POST', '/owner/signup', { body: { email, password: PASSWORD, displayName: 'Ada' } });
  expect(r.status, r.text).to.equal(201);
  return { email, res: r, session: { cookie: sessionCookieOf(r)!, csrfToken: r.body.data.csrfToken as string } };
}

async function tokenFromOutbox(email: string): Promise<string> {
  const { db } = await getContext();
  const row = await db('email_outbox')
    .where({ to_address: email, kind: 'verify_email' })
    .orderBy('created_at', 'desc')
    .first();
  return /svc_verify_[A-Za-z0-9_-]+/.exec(openBody((await getContext()).config.sessionSecret, row))![0];
}

describe('owners: signup, login, logout, session', () => {
  let s: OwnServer;
  before(async () => {
    s = await ownServer();
  });
  after(async () => s.close());

  it('POST /owner/signup → 201 {owner, csrfToken} and a session cookie with the decided attributes', async () => {
    const { email, res } = await signupVia(s);
    expect(res.body.data.owner).to.have.all.keys('id', 'email', 'emailVerified');
    expect(res.body.data.owner.email).to.equal(email);
    expect(res.body.data.owner.emailVerified).to.equal(false);
    expect(res.body.data.csrfToken).to.be.a('string').with.length.greaterThan(20);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(cookie).to.match(/; HttpOnly/);
    expect(cookie).to.match(/; SameSite=Lax/);
    expect(cookie).to.match(/; Max-Age=2592000/);
    expect(cookie).to.match(/; Path=\//);
    expect(cookie).not.to.match(/Secure/); // NODE_ENV=test
  });

  it('the cookie is Secure outside development and test', () => {
    const prod = { ...testConfig('postgres://x@127.0.0.1/x'), nodeEnv: 'production' as const };
    expect(sessionCookieHeader(prod, 'v', 60)).to.match(/; Secure$/);
    expect(sessionCookieHeader({ ...prod, nodeEnv: 'development' }, 'v', 60)).not.to.match(/Secure/);
  });

  it('stores the password only as a scrypt hash, queues the verification email in the outbox with a job', async () => {
    const { email } = await signupVia(s);
    const { db } = await getContext();
    const owner = await db('owners').where({ email }).first();
    expect(owner.password_hash).to.match(/^scrypt\$/);
    expect(JSON.stringify(owner)).not.to.contain(PASSWORD);
    const mail = await db('email_outbox').where({ to_address: email }).first();
    expect(mail.kind).to.equal('verify_email');
    expect(mail.sent_at).to.equal(null);
    expect(openBody((await getContext()).config.sessionSecret, mail)).to.match(/\/verify-email\?token=svc_verify_/);
    const job = await db('graphile_worker._private_jobs as j')
      .join('graphile_worker._private_tasks as t', 't.id', 'j.task_id')
      .where('t.identifier', 'email_outbox_send')
      .whereRaw(`j.payload->>'id' = ?`, [mail.id])
      .first();
    expect(job, 'email_outbox_send job queued').not.to.equal(undefined);
    // Only a hash of the verification token is stored beside the email.
    const token = await tokenFromOutbox(email);
    const ver = await db('email_verifications').where({ owner_id: owner.id }).first();
    expect(Buffer.isBuffer(ver.token_hash)).to.equal(true);
    expect(JSON.stringify(ver)).not.to.contain(token.slice(11));
    // The pending email itself is sealed: its token is not in the stored row.
    expect(JSON.stringify(mail)).not.to.contain(token.slice(11));
  });

  it('signup: 409 EMAIL_TAKEN (case-insensitive), 400 VALIDATION_FAILED for short password, bad email or blank display name', async () => {
    const { email } = await signupVia(s);
    const dup = await s.call('POST', '/owner/signup', { body: { email: email.toUpperCase(), password: PASSWORD } });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.code).to.equal('EMAIL_TAKEN');
    const short = await s.call('POST', '/owner/signup', {
      body: { email: `${uniq()}@example.test`, password: 'short' },
    });
    expect(short.status).to.equal(400);
    expect(short.body.error.code).to.equal('VALIDATION_FAILED');
    expect(short.body.error.details[0].path).to.equal('body/password');
    const bad = await s.call('POST', '/owner/signup', { body: { email: 'not-an-email', password: PASSWORD } });
    expect(bad.status).to.equal(400);
    expect(sessionCookieOf(bad)).to.equal(null);
    // A display name is optional, but never blank (as an agent's).
    const blankEmail = `${uniq()}@example.test`;
    const blank = await s.call('POST', '/owner/signup', {
      body: { email: blankEmail, password: PASSWORD, displayName: ' \t ' },
    });
    expect(blank.status).to.equal(400);
    expect(blank.body.error.code).to.equal('VALIDATION_FAILED');
    expect(blank.body.error.details[0].path).to.equal('body/displayName');
    const { db } = await getContext();
    expect(await db('owners').where({ email: blankEmail }).first()).to.equal(undefined);
  });

  it('POST /owner/login → 200 {owner:{id,email,emailVerified}, csrfToken} and a working session', async () => {
    const { email } = await signupVia(s);
    const r = await s.call('POST', '/owner/login', { body: { email: email.toUpperCase(), password: PASSWORD } });
    expect(r.status).to.equal(200);
    expect(Object.keys(r.body.data).sort()).to.deep.equal(['csrfToken', 'owner']);
    expect(r.body.data.owner).to.have.all.keys('id', 'email', 'emailVerified');
    expect(r.body.data.owner.email).to.equal(email);
    const cookie = sessionCookieOf(r)!;
    const me = await s.call('GET', '/owner/me', { session: { cookie } });
    expect(me.status).to.equal(200);
    expect(me.body.data.owner.email).to.equal(email);
    expect(me.body.data.csrfToken).to.equal(r.body.data.csrfToken);
    expect(me.headers.get('cache-control'), 'it carries the CSRF token').to.equal('no-store');
  });

  it('login: 401 INVALID_CREDENTIALS, the same answer for a wrong password and an unknown email', async () => {
    const { email } = await signupVia(s);
    const wrong = await s.call('POST', '/owner/login', { body: { email, password: 'wrong password!!' } });
    const unknown = await s.call('POST', '/owner/login', {
      body: { email: `${uniq()}@example.test`, password: PASSWORD },
    });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    expect(wrong.body).to.deep.equal(unknown.body);
    expect(wrong.body.error.code).to.equal('INVALID_CREDENTIALS');
    expect(sessionCookieOf(wrong)).to.equal(null);
  });

  it('signup and login are rate-limited per client address; requests answered 4xx never count', async function () {
    this.timeout(60_000);
    const limited = await ownServer(new MemoryLimiter());
    try {
      const taken = `${uniq()}@example.test`;
      expect(
        (await limited.call('POST', '/owner/signup', { body: { email: taken, password: PASSWORD } })).status,
      ).to.equal(201);
      for (let i = 0; i < 5; i++)
        expect((await limited.call('POST', '/owner/login', { body: {} })).status).to.equal(400);
      // 30 failed logins (over three accounts: under the failed-login lock, tested below).
      for (let i = 0; i < 30; i++) {
        const r = await limited.call('POST', '/owner/login', {
          body: { email: `nobody${i % 3}@example.test`, password: 'whatever-it-is' },
        });
        expect(r.status).to.equal(401);
      }
      for (let i = 0; i < 5; i++)
        expect(
          (await limited.call('POST', '/owner/signup', { body: { email: taken, password: PASSWORD } })).status,
        ).to.equal(409);
      // Only the first signup counted: the rest of the budget is whole.
      for (let i = 1; i < POLICIES.auth_ip.perMinute; i++) {
        const r =
          i % 2
            ? await limited.call('POST', '/owner/login', { body: { email: taken, password: PASSWORD } })
            : await limited.call('POST', '/owner/signup', {
                body: { email: `${uniq()}@example.test`, password: PASSWORD },
              });
        expect(r.status, `success ${i + 1}`).to.be.oneOf([200, 201]);
      }
      const r = await limited.call('POST', '/owner/signup', {
        body: { email: `${uniq()}@example.test`, password: PASSWORD },
      });
      expect(r.status).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITED');
      expect(r.body.error.retryAfterSeconds).to.be.within(1, 60);
      expect(r.headers.get('retry-after')).to.equal(String(r.body.error.retryAfterSeconds));
    } finally {
      await limited.close();
    }
  });

  it('failed logins lock an account for one address after 10 in 15 minutes, the right password too; an address after 50', async function () {
    this.timeout(60_000);
    let now = Date.now();
    const limited = await ownServer(new MemoryLimiter({ clock: () => now }));
    try {
      const { email } = await signupVia(limited);
      const guess = (e: string, password = 'wrong password!!') =>
        limited.call('POST', '/owner/login', { body: { email: e, password } });
      // Parallel guesses: exactly 10 are checked, the rest wait.
      const burst = await Promise.all(Array.from({ length: 14 }, () => guess(email)));
      expect(burst.filter((r) => r.status === 401)).to.have.length(10);
      const locked = burst.filter((r) => r.status === 429);
      expect(locked).to.have.length(4);
      expect(locked[0].body.error.code).to.equal('RATE_LIMITED');
      expect(locked[0].body.error.retryAfterSeconds).to.equal(901);
      expect(locked[0].headers.get('retry-after')).to.equal(String(locked[0].body.error.retryAfterSeconds));
      const right = await guess(email, PASSWORD);
      expect(right.status, 'the right password waits too').to.equal(429);
      expect(sessionCookieOf(right)).to.equal(null);
      // A differently written email is the same account; another account is not locked.
      expect((await guess(email.toUpperCase(), PASSWORD)).status).to.equal(429);
      const other = await signupVia(limited);
      expect(
        (await limited.call('POST', '/owner/login', { body: { email: other.email, password: PASSWORD } })).status,
      ).to.equal(200);
      // Logins that succeed never count.
      for (let i = 0; i < 12; i++)
        expect(
          (await limited.call('POST', '/owner/login', { body: { email: other.email, password: PASSWORD } })).status,
        ).to.equal(200);
      // Once the oldest failure is 15 minutes old, the account opens again.
      now += 900_001;
      expect((await guess(email, PASSWORD)).status).to.equal(200);
      // Across accounts, and with signups refused for a taken email: 50 failures per address.
      for (let i = 0; i < 45; i++) expect((await guess(`nobody${i % 9}@example.test`)).status).to.equal(401);
      for (let i = 0; i < 5; i++)
        expect((await limited.call('POST', '/owner/signup', { body: { email, password: PASSWORD } })).status).to.equal(
          409,
        );
      const full = await guess(`someone-else@example.test`);
      expect(full.status).to.equal(429);
      expect((await limited.call('POST', '/owner/signup', { body: { email, password: PASSWORD } })).status).to.equal(
        429,
      );
    } finally {
      await limited.close();
    }
  });

  it('login and signup refuse a browser request from another site (a cross-site form could log a visitor into an attacker account)', async () => {
    const email = `${uniq()}@example.test`;
    const body = `{"email":"${email}","password":"${PASSWORD}","x":"="}`;
    const evil = { 'content-type': 'text/plain', origin: 'https://evil.example' };
    const signup = await s.call('POST', '/owner/signup', { raw: body, headers: evil });
    expect(signup.status, signup.text).to.equal(403);
    expect(signup.body.error.code).to.equal('CROSS_ORIGIN_FORM');
    expect(sessionCookieOf(signup)).to.equal(null);
    const { db } = await getContext();
    expect(await db('owners').where({ email }).first()).to.equal(undefined);
    await signupVia(s, email);
    const login = await s.call('POST', '/owner/login', { raw: body, headers: evil });
    expect(login.status).to.equal(403);
    expect(sessionCookieOf(login)).to.equal(null);
    // Clients outside a browser send no Origin; the site's own pages send PUBLIC_URL's.
    expect((await s.call('POST', '/owner/login', { body: { email, password: PASSWORD } })).status).to.equal(200);
    const own = await s.call('POST', '/owner/login', {
      body: { email, password: PASSWORD },
      headers: { origin: new URL((await getContext()).deps.config.publicUrl).origin },
    });
    expect(own.status, own.text).to.equal(200);
  });

  it('POST /owner/logout revokes the session server-side and clears the cookie', async () => {
    const { session } = await signupVia(s);
    const r = await s.call('POST', '/owner/logout', { session });
    expect(r.status).to.equal(200);
    expect(r.body.data).to.deep.equal({ loggedOut: true });
    const cleared = r.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!;
    expect(cleared).to.match(/^svc_session=;/);
    expect(cleared).to.match(/Max-Age=0/);
    const { db } = await getContext();
    const sid = session.cookie.slice(0, session.cookie.lastIndexOf('.'));
    expect((await db('sessions').where({ id: sid }).first()).revoked_at).to.be.instanceOf(Date);
    const again = await s.call('GET', '/owner/me', { session });
    expect(again.status).to.equal(401);
    expect(again.body.error.code).to.equal('INVALID_SESSION');
  });

  it('session writes without X-CSRF-Token → 403 CSRF_TOKEN_INVALID; a wrong token too', async () => {
    const { session } = await signupVia(s);
    const r = await s.call('POST', '/owner/logout', { session, noCsrf: true });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    const wrong = await s.call('POST', '/owner/agents', {
      session: { cookie: session.cookie, csrfToken: 'x'.repeat(43) },
      body: { handle: uniq('h'), displayName: 'X' },
    });
    expect(wrong.status).to.equal(403);
    expect(wrong.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    // Reads need none.
    expect((await s.call('GET', '/owner/me', { session, noCsrf: true })).status).to.equal(200);
  });

  it('GET /owner/me: 401 INVALID_SESSION without a cookie or with a forged one', async () => {
    const none = await s.call('GET', '/owner/me');
    expect(none.status).to.equal(401);
    expect(none.body.error.code).to.equal('INVALID_SESSION');
    const o = await newOwner();
    const forged = o.session.cookie.slice(0, -3) + 'abc';
    const r = await s.call('GET', '/owner/me', { session: { cookie: forged } });
    expect(r.status).to.equal(401);
    expect(r.body.error.code).to.equal('INVALID_SESSION');
  });
});

describe('owners: email verification', () => {
  let s: OwnServer;
  before(async () => {
    s = await ownServer();
  });
  after(async () => s.close());

  it("a verification queues a reputation recompute for each of the owner's agents (TRUST counts a verified owner)", async () => {
    const { email, res } = await signupVia(s);
    const { db } = await getContext();
    const a = await newAgent();
    await db('agents').where({ id: a.agent.id }).update({ owner_id: res.body.data.owner.id });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    const queued = async () =>
      (
        await db.raw(`select count(*)::int n from graphile_worker.jobs where key = ?`, [
          `reputation_recompute:{"agentId":"${a.agent.id}"}`,
        ])
      ).rows[0].n;
    expect(await queued()).to.equal(0);
    expect(
      (await s.call('POST', '/owner/email/verify', { body: { token: await tokenFromOutbox(email) } })).status,
    ).to.equal(200);
    expect(await queued()).to.equal(1);
  });

  it('POST /owner/email/verify verifies once; 409 VERIFICATION_TOKEN_USED after; 404 for an unknown token', async () => {
    const { email, session } = await signupVia(s);
    const token = await tokenFromOutbox(email);
    const r = await s.call('POST', '/owner/email/verify', { body: { token } });
    expect(r.status).to.equal(200);
    expect(r.body.data.owner).to.include({ email, emailVerified: true });
    expect((await s.call('GET', '/owner/me', { session })).body.data.owner.emailVerified).to.equal(true);
    const again = await s.call('POST', '/owner/email/verify', { body: { token } });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('VERIFICATION_TOKEN_USED');
    const unknown = await s.call('POST', '/owner/email/verify', { body: { token: 'svc_verify_' + 'x'.repeat(43) } });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('VERIFICATION_TOKEN_NOT_FOUND');
    expect((await s.call('POST', '/owner/email/verify', { body: {} })).status).to.equal(400);
  });

  it('410 VERIFICATION_TOKEN_EXPIRED after 48 hours', async () => {
    const ctx = await getContext();
    ctx.setNow(new Date(Date.now() - 49 * 3600 * 1000));
    let email: string;
    try {
      email = (await signupVia(s)).email;
    } finally {
      ctx.setNow(null);
    }
    const r = await s.call('POST', '/owner/email/verify', { body: { token: await tokenFromOutbox(email) } });
    expect(r.status).to.equal(410);
    expect(r.body.error.code).to.equal('VERIFICATION_TOKEN_EXPIRED');
  });

  it('job email_outbox_send logs the link, marks the row sent and strips the token; reruns do nothing', async () => {
    const { email } = await signupVia(s);
    const ctx = await getContext();
    const mail = await ctx.db('email_outbox').where({ to_address: email }).first();
    const token = await tokenFromOutbox(email);
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const deps = {
      ...ctx.deps,
      config: { ...ctx.deps.config, nodeEnv: 'development' as const },
      log: pino({ level: 'info' }, sink),
    };
    const task = buildTaskList(deps).email_outbox_send!;
    await task({ id: mail.id }, {} as any);
    const logged = lines.join('');
    expect(logged).to.contain(`/verify-email?token=${token}`);
    const after = await ctx.db('email_outbox').where({ id: mail.id }).first();
    expect(after.sent_at).to.be.instanceOf(Date);
    expect(after.body).not.to.contain(token);
    expect(after.body).to.contain('svc_verify_[redacted]');
    lines.length = 0;
    await task({ id: mail.id }, {} as any);
    expect(lines.join('')).to.equal('');
    // The token still verifies: only the outbox copy is gone.
    expect((await s.call('POST', '/owner/email/verify', { body: { token } })).status).to.equal(200);
    let threw = false;
    await Promise.resolve(task({ id: 'nope' }, {} as any)).catch(() => (threw = true));
    expect(threw, 'bad payload fails the job').to.equal(true);
  });

  it('in production the token is never logged and the email stays pending', async () => {
    const { email } = await signupVia(s);
    const ctx = await getContext();
    const mail = await ctx.db('email_outbox').where({ to_address: email }).first();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const deps = {
      ...ctx.deps,
      config: { ...ctx.deps.config, nodeEnv: 'production' as const },
      log: pino({ level: 'info' }, sink),
    };
    await buildTaskList(deps).email_outbox_send!({ id: mail.id }, {} as any);
    expect(lines.join('')).not.to.contain('svc_verify_');
    expect((await ctx.db('email_outbox').where({ id: mail.id }).first()).sent_at).to.equal(null);
  });
});

describe('owners: agents and API keys', () => {
  let s: OwnServer;
  before(async () => {
    s = await ownServer();
  });
  after(async () => s.close());

  it('POST /owner/agents → 201 owned agent; GET /owner/me lists it', async () => {
    const o = await newOwner();
    const handle = uniq('Bot');
    const r = await s.call('POST', '/owner/agents', {
      session: o.session,
      body: { handle: '@' + handle, displayName: 'My Bot', model: 'gpt-x', platform: 'mcp' },
    });
    expect(r.status, r.text).to.equal(201);
    expect(r.body.data).to.include({
      handle: '@' + handle.toLowerCase(),
      displayName: 'My Bot',
      status: 'active',
      model: 'gpt-x',
      platform: 'mcp',
      ownerBound: true,
      officialConnector: false,
    });
    const me = await s.call('GET', '/owner/me', { session: o.session });
    expect(me.body.data.agents.map((a: any) => a.id)).to.deep.equal([r.body.data.id]);
  });

  it('POST /owner/agents: 409 HANDLE_TAKEN (case-insensitive), 400 for a bad handle or missing displayName, 401/403 without session/CSRF', async () => {
    const o = await newOwner();
    const a = await newAgent();
    const dup = await s.call('POST', '/owner/agents', {
      session: o.session,
      body: { handle: a.handle.toUpperCase(), displayName: 'X' },
    });
    expect(dup.status).to.equal(409);
    expect(dup.body.error.code).to.equal('HANDLE_TAKEN');
    const blankName = uniq('h');
    for (const body of [
      { handle: 'a-b-c', displayName: 'X' },
      { handle: 'ab', displayName: 'X' },
      { handle: uniq('h') },
      { handle: blankName, displayName: ' \t ' },
    ]) {
      const r = await s.call('POST', '/owner/agents', { session: o.session, body });
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    const { db } = await getContext();
    expect(await db('agents').where({ handle: blankName.toLowerCase() }).first(), 'nothing written').to.equal(
      undefined,
    );
    expect(
      (await s.call('POST', '/owner/agents', { body: { handle: uniq('h'), displayName: 'X' } })).body.error.code,
    ).to.equal('INVALID_SESSION');
    const noCsrf = await s.call('POST', '/owner/agents', {
      session: o.session,
      noCsrf: true,
      body: { handle: uniq('h'), displayName: 'X' },
    });
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_TOKEN_INVALID');
  });

  it('issue, list, revoke API keys: the key is shown once, list has no secrets, a revoked key gets 401 on /me', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    const issued = await s.call('POST', `/owner/agents/${a.agent.id}/keys`, {
      session: o.session,
      body: { scopes: ['read', 'post', 'read'], label: 'ci' },
    });
    expect(issued.status).to.equal(201);
    const k = issued.body.data;
    expect(k.key).to.match(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(k.key.startsWith(k.keyPrefix)).to.equal(true);
    expect(k.scopes).to.deep.equal(['read', 'post']);
    expect(k.label).to.equal('ci');
    const me = await s.call('GET', '/me', { key: k.key });
    expect(me.status).to.equal(200);
    expect(me.body.data.apiKey.scopes).to.deep.equal(['read', 'post']);
    expect(me.body.data.ownerBound).to.equal(true);

    const list = await s.call('GET', `/owner/agents/${a.agent.id}/keys`, { session: o.session });
    expect(list.status).to.equal(200);
    expect(list.body.data).to.have.length(2);
    expect(list.text).not.to.contain(k.key.slice(9));
    expect(list.text).not.to.contain(a.key.slice(9));
    expect(list.body.data[0]).to.include({ id: k.id, keyPrefix: k.keyPrefix, revokedAt: null });

    const del = await s.call('DELETE', `/owner/agents/${a.agent.id}/keys/${k.id}`, { session: o.session });
    expect(del.status).to.equal(200);
    expect(del.body.data.revokedAt).to.be.a('string');
    const after = await s.call('GET', '/me', { key: k.key });
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal('INVALID_API_KEY');
    expect((await s.call('GET', '/me', { key: a.key })).status, 'other keys keep working').to.equal(200);
    const again = await s.call('DELETE', `/owner/agents/${a.agent.id}/keys/${k.id}`, { session: o.session });
    expect(again.body.data.revokedAt).to.equal(del.body.data.revokedAt);
  });

  it("another owner's agent is 403 NOT_AGENT_OWNER; an unknown agent or key and malformed ids are 404 NOT_FOUND", async () => {
    const o = await newOwner();
    const other = await newOwner();
    const theirs = await newAgent({ owner: other });
    const theirKeyId = (await getContext().then((c) => c.db('api_keys').where({ agent_id: theirs.agent.id }).first()))
      .id;
    const before = await getContext().then((c) =>
      c.db('api_keys').where({ agent_id: theirs.agent.id }).select('id', 'revoked_at'),
    );
    const cases: [string, string, number, string, unknown?][] = [
      ['POST', `/owner/agents/${theirs.agent.id}/keys`, 403, 'NOT_AGENT_OWNER', { scopes: ['read'] }],
      ['GET', `/owner/agents/${theirs.agent.id}/keys`, 403, 'NOT_AGENT_OWNER'],
      ['DELETE', `/owner/agents/${theirs.agent.id}/keys/${theirKeyId}`, 403, 'NOT_AGENT_OWNER'],
      ['GET', `/owner/agents/00000000-0000-4000-8000-000000000000/keys`, 404, 'NOT_FOUND'],
      ['GET', `/owner/agents/not-a-uuid/keys`, 404, 'NOT_FOUND'],
    ];
    for (const [m, p, status, code, body] of cases) {
      const r = await s.call(m, p, { session: o.session, body });
      expect(r.status, `${m} ${p}`).to.equal(status);
      expect(r.body.error.code).to.equal(code);
      expect(r.text.includes(theirKeyId), 'no key id in the answer').to.equal(false);
    }
    expect(
      await getContext().then((c) => c.db('api_keys').where({ agent_id: theirs.agent.id }).select('id', 'revoked_at')),
      'no key issued or revoked',
    ).to.deep.equal(before);
    const mine = await newAgent({ owner: o });
    const r = await s.call('DELETE', `/owner/agents/${mine.agent.id}/keys/${theirKeyId}`, { session: o.session });
    expect(r.status).to.equal(404);
    expect((await s.call('GET', '/me', { key: theirs.key })).status, 'their key is untouched').to.equal(200);
  });

  it('issue key: 400 for unknown or empty scopes', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    for (const scopes of [[], ['admin']]) {
      const r = await s.call('POST', `/owner/agents/${a.agent.id}/keys`, { session: o.session, body: { scopes } });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
  });
});
