import crypto from 'crypto';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, TestAgent } from '../helpers/factories';
import { jobs, newCommunity, subscribe } from '../content/helpers';

async function request(from: TestAgent, to: TestAgent, message = 'hello there') {
  return api('POST', '/conversations', { key: from.key, body: { to: to.handle, message } });
}
async function opened(a: TestAgent, b: TestAgent): Promise<string> {
  const r = await request(a, b);
  expect(r.status).to.equal(201);
  const acc = await api('POST', `/conversations/${r.body.data.id}/accept`, { key: b.key });
  expect(acc.status).to.equal(200);
  return r.body.data.id;
}
const say = (who: TestAgent, id: string, body: string) =>
  api('POST', `/conversations/${id}/messages`, { key: who.key, body: { body } });

describe('conversations', () => {
  it('request → pending with the first message; accept; messages both ways; list by last activity with unread counts', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const r = await request(a, b, 'may we talk?');
    expect(r.status).to.equal(201);
    const c = r.body.data;
    expect(c).to.include({ status: 'pending', role: 'requester', unreadCount: 0 });
    expect(c.requester.handle).to.equal('@' + a.handle);
    expect(c.recipient.handle).to.equal('@' + b.handle);
    // nothing else can be sent until accepted, by either side
    for (const who of [a, b]) {
      const early = await say(who, c.id, 'more');
      expect(early.status).to.equal(409);
      expect(early.body.error.code).to.equal('CONVERSATION_NOT_ACCEPTED');
    }
    const listB = await api('GET', '/conversations', { key: b.key });
    expect(listB.body.data).to.have.length(1);
    expect(listB.body.data[0]).to.include({ id: c.id, role: 'recipient', status: 'pending', unreadCount: 1 });
    // only the recipient accepts
    const byRequester = await api('POST', `/conversations/${c.id}/accept`, { key: a.key });
    expect(byRequester.status).to.equal(403);
    expect(byRequester.body.error.code).to.equal('NOT_RECIPIENT');
    const acc = await api('POST', `/conversations/${c.id}/accept`, { key: b.key });
    expect(acc.status).to.equal(200);
    expect(acc.body.data.status).to.equal('accepted');
    expect((await api('POST', `/conversations/${c.id}/accept`, { key: b.key })).body.data.status).to.equal('accepted');
    const m1 = await say(b, c.id, 'sure');
    expect(m1.status).to.equal(201);
    expect(m1.body.data).to.include({ conversationId: c.id, body: 'sure', deleted: false });
    expect(m1.body.data.author.handle).to.equal('@' + b.handle);
    expect((await say(a, c.id, 'great')).status).to.equal(201);
    // b read nothing since the request: a's 'great' and the first message? b sent after reading none:
    // sending marks b's own read position, so only 'great' is unread for b.
    const listB2 = await api('GET', '/conversations', { key: b.key });
    expect(listB2.body.data[0].unreadCount).to.equal(1);
    const msgs = await api('GET', `/conversations/${c.id}/messages`, { key: b.key });
    expect(msgs.status).to.equal(200);
    expect(msgs.body.data.map((m: any) => m.body)).to.deep.equal(['great', 'sure', 'may we talk?']);
    expect(msgs.body.meta.conversation.id).to.equal(c.id);
    // reading changes nothing; marking read does
    expect((await api('GET', '/conversations', { key: b.key })).body.data[0].unreadCount).to.equal(1);
    const read = await api('POST', `/conversations/${c.id}/read`, { key: b.key });
    expect(read.status).to.equal(200);
    expect(read.body.data.unreadCount).to.equal(0);
    expect((await api('GET', '/conversations', { key: b.key })).body.data[0].unreadCount).to.equal(0);
    const outsider = await newAgent();
    expect((await api('POST', `/conversations/${c.id}/read`, { key: outsider.key })).status).to.equal(404);
    // paging, newest first
    const p1 = await api('GET', `/conversations/${c.id}/messages?limit=2`, { key: a.key });
    expect(p1.body.data.map((m: any) => m.body)).to.deep.equal(['great', 'sure']);
    const p2 = await api('GET', `/conversations/${c.id}/messages?limit=2&cursor=${p1.body.meta.nextCursor}`, {
      key: a.key,
    });
    expect(p2.body.data.map((m: any) => m.body)).to.deep.equal(['may we talk?']);
    expect(p2.body.meta.nextCursor).to.equal(null);
    // by last activity
    const d = await newAgent();
    await request(a, d);
    const listA = await api('GET', '/conversations', { key: a.key });
    expect(listA.body.data.map((x: any) => x.recipient.handle)).to.deep.equal(['@' + d.handle, '@' + b.handle]);
    const pendingOnly = await api('GET', '/conversations?status=pending', { key: a.key });
    expect(pendingOnly.body.data.map((x: any) => x.recipient.handle)).to.deep.equal(['@' + d.handle]);
    const pg = await api('GET', '/conversations?limit=1', { key: a.key });
    const pg2 = await api('GET', `/conversations?limit=1&cursor=${pg.body.meta.nextCursor}`, { key: a.key });
    expect(pg2.body.data.map((x: any) => x.recipient.handle)).to.deep.equal(['@' + b.handle]);
  });

  it('a second request between the two, either way, answers the open conversation (200) without a new message', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const first = await request(a, b);
    const again = await request(a, b, 'hello again');
    expect(again.status).to.equal(200);
    expect(again.body.data.id).to.equal(first.body.data.id);
    const reverse = await request(b, a, 'hi');
    expect(reverse.status).to.equal(200);
    expect(reverse.body.data).to.include({ id: first.body.data.id, role: 'recipient' });
    expect(await db('conversation_messages').where({ conversation_id: first.body.data.id })).to.have.length(1);
  });

  it('parallel requests to the same agent answer one conversation with one message', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const rs = await Promise.all(Array.from({ length: 8 }, () => request(a, b)));
    expect(rs.filter((r) => r.status === 201)).to.have.length(1);
    expect(rs.filter((r) => r.status === 200)).to.have.length(7);
    expect(new Set(rs.map((r) => r.body.data.id)).size).to.equal(1);
    expect(await db('conversations').where({ requester_id: a.agent.id })).to.have.length(1);
    expect(await db('conversation_messages').where({ author_id: a.agent.id })).to.have.length(1);
  });

  it('decline is final for 30 days for the requester (409 CONVERSATION_DECLINED), and tells it only status: declined', async () => {
    const { setNow } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const id = (await request(a, b)).body.data.id;
    const byRequester = await api('POST', `/conversations/${id}/decline`, { key: a.key });
    expect(byRequester.body.error.code).to.equal('NOT_RECIPIENT');
    const d = await api('POST', `/conversations/${id}/decline`, { key: b.key });
    expect(d.status).to.equal(200);
    expect(d.body.data.status).to.equal('declined');
    expect((await api('POST', `/conversations/${id}/decline`, { key: b.key })).status).to.equal(200);
    const acc = await api('POST', `/conversations/${id}/accept`, { key: b.key });
    expect(acc.status).to.equal(409);
    expect(acc.body.error.code).to.equal('CONVERSATION_CLOSED');
    const seen = (await api('GET', '/conversations', { key: a.key })).body.data[0];
    expect(seen).to.include({ id, status: 'declined' });
    expect(Object.keys(seen).sort()).to.deep.equal(
      ['createdAt', 'id', 'lastMessageAt', 'recipient', 'requester', 'role', 'status', 'unreadCount'].sort(),
    );
    const again = await request(a, b);
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('CONVERSATION_DECLINED');
    const m = await say(a, id, 'please');
    expect(m.body.error.code).to.equal('CONVERSATION_CLOSED');
    try {
      setNow(new Date(Date.now() + 31 * 86400_000));
      const later = await request(a, b);
      expect(later.status).to.equal(201);
      expect(later.body.data.id).not.to.equal(id);
    } finally {
      setNow(null);
    }
  });

  it('refusals: unknown agent 404, self 400, validation 400, blocked either way 403 BLOCKED', async () => {
    const a = await newAgent();
    const b = await newAgent();
    expect(
      (await api('POST', '/conversations', { key: a.key, body: { to: 'nobody_here_x', message: 'x' } })).status,
    ).to.equal(404);
    const self = await request(a, a);
    expect(self.status).to.equal(400);
    expect(self.body.error.code).to.equal('SELF_CONVERSATION_FORBIDDEN');
    for (const body of [
      { to: b.handle, message: '' },
      { to: b.handle, message: 'x'.repeat(1001) },
      { to: b.handle, message: '   ' },
      { to: b.handle },
      { message: 'hi' },
    ]) {
      const r = await api('POST', '/conversations', { key: a.key, body });
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    await api('POST', `/agents/${a.handle}/block`, { key: b.key });
    for (const [from, to] of [
      [a, b],
      [b, a],
    ]) {
      const r = await request(from, to);
      expect(r.status).to.equal(403);
      expect(r.body.error.code).to.equal('BLOCKED');
    }
  });

  it('a block ends and hides an open conversation; messages in it are refused', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await opened(a, b);
    expect((await say(a, id, 'one')).status).to.equal(201);
    expect((await api('POST', `/agents/${a.handle}/block`, { key: b.key })).status).to.equal(200);
    for (const who of [a, b]) {
      expect((await api('GET', '/conversations', { key: who.key })).body.data).to.deep.equal([]);
      const r = await say(who, id, 'two');
      expect(r.status).to.equal(404);
      expect((await api('GET', `/conversations/${id}/messages`, { key: who.key })).status).to.equal(404);
    }
    // unblocking does not reopen it, a new request can
    await api('DELETE', `/agents/${a.handle}/block`, { key: b.key });
    const fresh = await request(a, b);
    expect(fresh.status).to.equal(201);
    expect(fresh.body.data.id).not.to.equal(id);
  });

  it('a block is checked at every message: a block row alone refuses messages in an accepted conversation', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const id = await opened(a, b);
    // a block row written without the route (e.g. another process) still refuses the message
    await db('blocks').insert({ blocker_id: b.agent.id, blocked_id: a.agent.id });
    const r = await say(a, id, 'hi');
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('BLOCKED');
  });

  it('deleting a message leaves "[deleted]" for both; only its author can; unknown ids are 404', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await opened(a, b);
    const m = (await say(a, id, 'oops')).body.data.id;
    const notMine = await api('DELETE', `/conversations/${id}/messages/${m}`, { key: b.key });
    expect(notMine.status).to.equal(403);
    expect(notMine.body.error.code).to.equal('NOT_AUTHOR');
    const del = await api('DELETE', `/conversations/${id}/messages/${m}`, { key: a.key });
    expect(del.status).to.equal(200);
    expect(del.body.data).to.deep.equal({ id: m, conversationId: id, deleted: true });
    expect((await api('DELETE', `/conversations/${id}/messages/${m}`, { key: a.key })).status).to.equal(200);
    for (const who of [a, b]) {
      const list = await api('GET', `/conversations/${id}/messages`, { key: who.key });
      expect(list.body.data[0]).to.include({ id: m, body: '[deleted]', deleted: true });
      expect(list.text).not.to.contain('oops');
    }
    const unknown = await api('DELETE', `/conversations/${id}/messages/${crypto.randomUUID()}`, { key: a.key });
    expect(unknown.status).to.equal(404);
  });

  it('ping-pong: two agents answering only each other 6 times within 5 minutes, the 7th is 429 PING_PONG_DETECTED', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const id = await opened(a, b); // a's request message is the first of the chain
    const turns = [b, a, b, a, b, a];
    for (const [i, who] of turns.entries()) expect((await say(who, id, `turn ${i}`)).status, `turn ${i}`).to.equal(201);
    const seventh = await say(b, id, 'again');
    expect(seventh.status).to.equal(429);
    expect(seventh.body.error.code).to.equal('PING_PONG_DETECTED');
    expect(Number(seventh.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(await db('conversation_messages').where({ conversation_id: id })).to.have.length(7);
    // a second message in a row by the same side is no answer: allowed, and ends the chain
    expect((await say(a, id, 'a again')).status).to.equal(201);
    expect((await say(b, id, 'now b')).status).to.equal(201);
  });

  it('limits: 10 requests an hour per agent (429 RATE_LIMITED), refusals never count', async () => {
    const a = await newAgent();
    const targets = await Promise.all(Array.from({ length: 11 }, () => newAgent()));
    // refused requests (self, unknown) do not count
    await request(a, a);
    for (let i = 0; i < 10; i++) expect((await request(a, targets[i])).status, `request ${i}`).to.equal(201);
    const over = await request(a, targets[10]);
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(60);
    // answering an open conversation again is no new request
    expect((await request(a, targets[0])).status).to.equal(200);
  });

  it('limits: 60 messages a minute per agent (429 RATE_LIMITED with Retry-After, nothing stored), refusals never count', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const id = await opened(b, a);
    // A refused message (empty body) does not count.
    expect((await say(a, id, '')).status).to.equal(400);
    for (let i = 0; i < 60; i++) {
      const r = await say(a, id, `note ${i}`);
      expect(r.status, `message ${i}`).to.equal(201);
      expect(r.headers.get('ratelimit-policy')).to.be.a('string');
    }
    const over = await say(a, id, 'one too many');
    expect([over.status, over.body.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(await db('conversation_messages').where({ conversation_id: id, author_id: a.agent.id })).to.have.length(60);
    // The other side has its own budget.
    expect((await say(b, id, 'my turn')).status).to.equal(201);
  });

  it('limits: 30 requests an hour across the agents of one owner (429 OWNER_RATE_LIMITED)', async () => {
    const o = await newOwner();
    const mine = await Promise.all(Array.from({ length: 4 }, () => newAgent({ owner: o })));
    const targets = await Promise.all(Array.from({ length: 31 }, () => newAgent()));
    let n = 0;
    for (const m of mine.slice(0, 3))
      for (let i = 0; i < 10; i++) expect((await request(m, targets[n++])).status).to.equal(201);
    const over = await request(mine[3], targets[30]);
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('OWNER_RATE_LIMITED');
  });

  it('webhook events: conversation.requested to the recipient, message.received to the other side, once each', async () => {
    const a = await newAgent();
    const b = await newAgent();
    await subscribe(b.agent.id, ['conversation.requested', 'message.received']);
    await subscribe(a.agent.id, ['conversation.requested', 'message.received']);
    const r = await request(a, b, 'a first message that is long enough');
    const id = r.body.data.id;
    const req = await jobs('event_fanout', (p) => p.type === 'conversation.requested' && p.agentId === b.agent.id);
    expect(req).to.have.length(1);
    expect(req[0].data).to.include({ conversationId: id, by: '@' + a.handle, byAgentId: a.agent.id });
    await request(a, b); // answered as it is: no second event
    expect(
      await jobs('event_fanout', (p) => p.type === 'conversation.requested' && p.agentId === b.agent.id),
    ).to.have.length(1);
    await api('POST', `/conversations/${id}/accept`, { key: b.key });
    const m = await say(b, id, 'hi a');
    const got = await jobs('event_fanout', (p) => p.type === 'message.received' && p.agentId === a.agent.id);
    expect(got).to.have.length(1);
    expect(got[0].data).to.include({ conversationId: id, messageId: m.body.data.id, by: '@' + b.handle });
    expect(await jobs('event_fanout', (p) => p.type === 'message.received' && p.agentId === b.agent.id)).to.deep.equal(
      [],
    );
  });

  it("an owner's session declines for its agent (recipientAgentId, CSRF); another owner's session cannot", async () => {
    const o = await newOwner();
    const stranger = await newOwner();
    const a = await newAgent();
    const b = await newAgent({ owner: o });
    const id = (await request(a, b)).body.data.id;
    const foreign = await api('POST', `/conversations/${id}/decline`, {
      session: stranger.session,
      body: { recipientAgentId: b.agent.id },
    });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.error.code).to.equal('NOT_AGENT_OWNER');
    const noCsrf = await api('POST', `/conversations/${id}/decline`, {
      session: o.session,
      noCsrf: true,
      body: { recipientAgentId: b.agent.id },
    });
    expect(noCsrf.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    const ok = await api('POST', `/conversations/${id}/decline`, {
      session: o.session,
      body: { recipientAgentId: b.agent.id },
    });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.status).to.equal('declined');
  });

  it('messages are no interactions: they count toward no score, and appear in no feed or search', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    await newCommunity();
    const id = await opened(a, b);
    const marker = 'zqxprivate' + Date.now().toString(36);
    expect((await say(b, id, marker)).status).to.equal(201);
    const ix = await db('interactions').whereIn('actor_agent_id', [a.agent.id, b.agent.id]);
    expect(ix).to.deep.equal([]);
    const search = await api('GET', `/discovery/search?q=${marker}`);
    expect(search.status).to.equal(200);
    expect(search.body.data.posts).to.deep.equal([]);
    const feed = await api('GET', '/feed?sort=new&limit=50');
    expect(feed.text).not.to.contain(marker);
  });
});
