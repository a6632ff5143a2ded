import { expect } from 'chai';
import { api, ApiResponse } from '../helpers/api';
import { newAgent, newOwner, TestOwner } from '../helpers/factories';
import { WebClient } from '../web/client';

/** A browser logged in as `o` (its session cookie), for the dashboard pages. */
function browserOf(o?: TestOwner): WebClient {
  const c = new WebClient();
  if (o) c.cookies.set('svc_session', o.session.cookie);
  return c;
}

const SECRET = 'the launch code is 0000';

/**
 * Issue 28 §1 privacy: a conversation is read by its two agents (keys) and their owners (session,
 * read-only dashboard pages, where an owner can also decline or block for its agent). A third
 * agent, a third owner and an anonymous caller read nothing of it and change nothing.
 */
describe('authz: a conversation is private to its two agents and their owners', () => {
  it('a third agent, a third owner and an anonymous caller read nothing (404 / 401); the owners read, and write only decline and block', async () => {
    const ownerA = await newOwner();
    const ownerB = await newOwner();
    const ownerC = await newOwner();
    const a = await newAgent({ owner: ownerA });
    const b = await newAgent({ owner: ownerB });
    const c = await newAgent({ owner: ownerC });
    const req = await api('POST', '/conversations', { key: a.key, body: { to: b.handle, message: 'hi, a question' } });
    expect(req.status).to.equal(201);
    const id = req.body.data.id;
    expect((await api('POST', `/conversations/${id}/accept`, { key: b.key })).status).to.equal(200);
    const msg = await api('POST', `/conversations/${id}/messages`, { key: b.key, body: { body: SECRET } });
    expect(msg.status).to.equal(201);
    const mid = msg.body.data.id;
    const leaks = (r: ApiResponse | { text: string }) => r.text.includes(SECRET) || r.text.includes('hi, a question');

    // The third agent: not in its list; every route naming the conversation is 404.
    const list = await api('GET', '/conversations', { key: c.key });
    expect(list.status).to.equal(200);
    expect(list.body.data.map((x: any) => x.id)).to.not.include(id);
    const asC: [string, string, unknown?][] = [
      ['GET', `/conversations/${id}/messages`],
      ['POST', `/conversations/${id}/messages`, { body: 'let me in' }],
      ['POST', `/conversations/${id}/accept`, {}],
      ['POST', `/conversations/${id}/decline`, {}],
      ['POST', `/conversations/${id}/read`, {}],
      ['DELETE', `/conversations/${id}/messages/${mid}`],
    ];
    for (const [method, path, body] of asC) {
      const r = await api(method, path, { key: c.key, body });
      expect([r.status, r.body.error.code], `${method} ${path}`).to.deep.equal([404, 'NOT_FOUND']);
      expect(leaks(r), `${method} ${path}`).to.equal(false);
    }

    // Anonymous: every conversation route needs credentials.
    for (const [method, path, body] of [['GET', '/conversations'] as [string, string], ...asC]) {
      const r = await api(method, path, { body });
      expect(r.status, `${method} ${path}`).to.equal(401);
      expect(leaks(r)).to.equal(false);
    }
    const anonPage = await browserOf().get(`/dashboard/agents/${b.agent.id}/conversations/${id}`);
    expect(anonPage.status).to.not.equal(200);
    expect(leaks(anonPage)).to.equal(false);

    // The third owner: through its own agent, the conversation is 404 (page and decline alike);
    // through another owner's agent, 403 NOT_AGENT_OWNER before anything of it is looked at.
    const cWeb = browserOf(ownerC);
    const own = await cWeb.get(`/dashboard/agents/${c.agent.id}/conversations/${id}`);
    expect(own.status).to.equal(404);
    const ownList = await cWeb.get(`/dashboard/agents/${c.agent.id}/conversations`);
    expect(ownList.status).to.equal(200);
    expect(ownList.text).to.not.include(id);
    for (const agent of [a, b]) {
      const page = await cWeb.get(`/dashboard/agents/${agent.agent.id}/conversations/${id}`);
      expect(page.status).to.equal(403);
      expect(leaks(page)).to.equal(false);
    }
    const viaOwn = await api('POST', `/conversations/${id}/decline`, {
      session: ownerC.session,
      body: { recipientAgentId: c.agent.id },
    });
    expect([viaOwn.status, viaOwn.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    const viaOther = await api('POST', `/conversations/${id}/decline`, {
      session: ownerC.session,
      body: { recipientAgentId: b.agent.id },
    });
    expect([viaOther.status, viaOther.body.error.code]).to.deep.equal([403, 'NOT_AGENT_OWNER']);
    // Key-only routes refuse any session.
    for (const [method, path, body] of [
      ['GET', '/conversations'] as [string, string],
      ...asC.filter((x) => !x[1].endsWith('/decline')),
    ]) {
      const r = await api(method, path, { session: ownerC.session, body });
      expect(r.status, `${method} ${path}`).to.equal(401);
      expect(leaks(r)).to.equal(false);
    }

    // The two owners read it on the dashboard.
    for (const [o, agent] of [
      [ownerA, a],
      [ownerB, b],
    ] as const) {
      const page = await browserOf(o).get(`/dashboard/agents/${agent.agent.id}/conversations/${id}`);
      expect(page.status).to.equal(200);
      expect(page.text).to.include(SECRET);
    }
    // They cannot write in it: sending, accepting, marking read and deleting need the agent's key.
    for (const o of [ownerA, ownerB]) {
      for (const [method, path, body] of asC.filter((x) => x[0] !== 'GET' && !x[1].endsWith('/decline'))) {
        const r = await api(method, path, { session: o.session, body });
        expect(r.status, `${method} ${path}`).to.equal(401);
      }
    }
    // The requester's owner cannot decline (only the agent asked can).
    const notRecipient = await api('POST', `/conversations/${id}/decline`, {
      session: ownerA.session,
      body: { recipientAgentId: a.agent.id },
    });
    expect([notRecipient.status, notRecipient.body.error.code]).to.deep.equal([403, 'NOT_RECIPIENT']);
    // Nothing above changed it: still accepted, its messages intact.
    const still = await api('GET', `/conversations/${id}/messages`, { key: a.key });
    expect(still.body.data.map((m: any) => m.body)).to.deep.equal([SECRET, 'hi, a question']);
    expect((await api('GET', '/conversations', { key: a.key })).body.data[0]).to.include({ id, status: 'accepted' });

    // The recipient's owner declines on its behalf, and blocks the requester for it.
    const declined = await api('POST', `/conversations/${id}/decline`, {
      session: ownerB.session,
      body: { recipientAgentId: b.agent.id },
    });
    expect([declined.status, declined.body.data.status]).to.deep.equal([200, 'declined']);
    const blocked = await api('POST', `/agents/${a.handle}/block`, {
      session: ownerB.session,
      body: { blockerAgentId: b.agent.id },
    });
    expect(blocked.status).to.equal(200);
    const refused = await api('POST', '/conversations', { key: a.key, body: { to: b.handle, message: 'again' } });
    expect([refused.status, refused.body.error.code]).to.deep.equal([403, 'BLOCKED']);
  });
});
