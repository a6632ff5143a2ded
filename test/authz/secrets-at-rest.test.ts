import crypto from 'crypto';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { uniq } from '../helpers/factories';
import { openBody } from '../../src/owners/outbox';
import { buildWorld, ensureCommunity } from '../fuzz/world';

/** No secret at rest in clear: every issued secret is absent from every stored row and job payload. */
describe('secrets at rest', () => {
  it('no password, API key, connect key, claim token, email verification token, webhook secret, installation id, session or CSRF token is stored in clear', async () => {
    const { db } = await getContext();
    const w = await buildWorld(await ensureCommunity(), 2);
    const secrets: Record<string, string> = {
      password: 'correct horse battery staple',
      apiKey: w.mine[0].key,
      apiKey2: w.other.key,
      sessionCookieSignature: w.owner.session.cookie.split('.').pop()!,
      csrfToken: w.owner.session.csrfToken,
    };
    if (w.connectKey) secrets.connectKey = w.connectKey;
    if (w.claimToken) secrets.claimToken = w.claimToken;
    if (w.webhookSecret) secrets.webhookSecret = w.webhookSecret;
    // A signup through the API: its verification email waits in the outbox (in production until
    // a mail transport exists) with a live token.
    const email = `${uniq('s')}@example.test`;
    expect(
      (await api('POST', '/owner/signup', { body: { email, password: 'another long password' } })).status,
    ).to.equal(201);
    const mail = await db('email_outbox').where({ to_address: email }).first();
    expect(mail.sent_at).to.equal(null);
    const verify = /svc_verify_[A-Za-z0-9_-]+/.exec(openBody((await getContext()).config.sessionSecret, mail));
    if (verify) secrets.emailVerificationToken = verify[0];
    // An installationId (a bearer secret the runtime chooses): given at key creation and at an
    // exchange, answered once, never listed afterwards.
    const installationId = `inst_${crypto.randomBytes(12).toString('hex')}`;
    const created = await api('POST', '/connect/keys', { session: w.owner.session, body: { installationId } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data.installationId).to.equal(installationId);
    const exchanged = await api('POST', '/connect/exchange', {
      body: { connectKey: created.body.data.connectKey, framework: 'mcp', localAgentId: 'bot1', installationId },
    });
    expect(exchanged.status, exchanged.text).to.equal(200);
    const anonymous = await api('POST', '/connect/keys', { body: { installationId } });
    expect(anonymous.status, anonymous.text).to.equal(201);
    const again = await api('POST', '/connect/exchange', {
      body: { connectKey: anonymous.body.data.connectKey, framework: 'mcp', localAgentId: 'bot2' },
    });
    expect(again.status, again.text).to.equal(200);
    const listed = await api('GET', '/owner/connect-keys', { session: w.owner.session });
    expect(listed.status).to.equal(200);
    expect(listed.text).to.not.include(installationId);
    for (const k of listed.body.data) expect(k).to.not.have.property('installationId');
    secrets.installationId = installationId;
    expect(Object.keys(secrets)).to.include.members([
      'connectKey',
      'claimToken',
      'webhookSecret',
      'emailVerificationToken',
    ]);
    // The random part after a known prefix, so a stored prefix alone does not count.
    const needles = Object.entries(secrets).map(
      ([k, v]) => [k, v.replace(/^(svc_live_|svc_connect_|svc_claim_|svc_verify_|whsec_)/, '')] as const,
    );
    const tables: string[] = (
      await db.raw(
        `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
      )
    ).rows.map((r: any) => r.table_name);
    const dumps: string[] = [];
    for (const t of tables)
      dumps.push(
        ...(await db.raw(`select to_jsonb(x)::text as j from public."${t}" x`)).rows.map((r: any) => `${t}: ${r.j}`),
      );
    dumps.push(
      ...(await db.raw(`select payload::text as j from graphile_worker._private_jobs`)).rows.map(
        (r: any) => `job: ${r.j}`,
      ),
    );
    expect(dumps.length).to.be.greaterThan(10);
    for (const [name, needle] of needles) {
      expect(needle.length, name).to.be.greaterThan(8);
      const hit = dumps.find((d) => d.includes(needle));
      expect(hit, `${name} stored in clear`).to.equal(undefined);
    }
  });
});
