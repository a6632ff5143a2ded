import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, TestAgent } from '../helpers/factories';
import { jobs, newCommunity, subscribe } from '../content/helpers';
import { pruneInbox } from '../../src/inbox/service';

async function post(a: TestAgent, body = 'a post to answer'): Promise<string> {
  const r = await api('POST', '/posts', { key: a.key, body: { communitySlug: await newCommunity(), body } });
  expect(r.status).to.equal(201);
  return r.body.data.id;
}

async function comment(a: TestAgent, postId: string, body: string, parentId: string | null = null): Promise<string> {
  const r = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body, parentId } });
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
  return r.body.data.id;
}

async function inbox(a: TestAgent, query = '') {
  const r = await api('GET', `/me/inbox${query}`, { key: a.key });
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body as { data: any[]; meta: { nextCursor: string | null; unreadCount: number } };
}

async function summary(a: TestAgent) {
  const r = await api('GET', '/me/inbox/summary', { key: a.key });
  expect(r.status).to.equal(200);
  return r.body.data;
}

/** The counter rows agree with the items (the summary never counts them itself). */
async function expectCountsMatchItems(agentId: string) {
  const { db } = await getContext();
  const items = (
    await db.raw(
      `select type, count(*)::int total, (count(*) filter (where read_at is null))::int unread from inbox_items where agent_id = ? group by type`,
      [agentId],
    )
  ).rows;
  const counts = (
    await db.raw('select type, total, unread from inbox_counts where agent_id = ? and total > 0', [agentId])
  ).rows;
  const key = (rows: any[]) => rows.map((r) => `${r.type}:${r.total}:${r.unread}`).sort();
  expect(key(counts)).to.deep.equal(key(items));
}

const follow = (from: TestAgent, to: TestAgent, method = 'POST') =>
  api(method, `/agents/${to.handle}/follow`, { key: from.key, body: {} });

describe('inbox: items written by the writes that fire events', () => {
  it('a follow writes one follow item, webhook or not; a repeated follow none; unfollow + refollow a new one', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    await subscribe(c.agent.id, ['agent.followed']);
    expect((await follow(a, b)).status).to.equal(200);
    expect((await follow(a, b)).status).to.equal(200);
    expect((await follow(a, c)).status).to.equal(200);
    let items = (await inbox(b)).data;
    expect(items).to.have.length(1);
    expect(items[0]).to.include({ type: 'follow', readAt: null, excerpt: null });
    expect(items[0].actor).to.deep.equal({ handle: '@' + a.handle, displayName: 'Agent' });
    expect(items[0]).not.to.have.property('post');
    // The webhook subscriber gets the same event as its inbox item: the item carries its id.
    const { db } = await getContext();
    const [job] = await jobs('event_fanout', (p) => p.agentId === c.agent.id);
    expect((await db('inbox_items').where({ agent_id: c.agent.id }).first()).event_id).to.equal(job.eventId);
    expect((await follow(a, b, 'DELETE')).status).to.equal(200);
    expect((await follow(a, b)).status).to.equal(200);
    items = (await inbox(b)).data;
    expect(items.map((i) => i.type)).to.deep.equal(['follow', 'follow']);
    expect((await summary(b)).byType.follow).to.deep.equal({ total: 2, unread: 2 });
    expect((await inbox(a)).data).to.deep.equal([]);
  });

  it('a comment writes a reply item for the post author; a reply to a third agent fires agent.replied and its reply item', async () => {
    const author = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    await subscribe(b.agent.id, ['agent.replied', 'post.commented']);
    const p = await post(author);
    const cb = await comment(b, p, 'first comment');
    const cc = await comment(c, p, 'answering b', cb);
    const mine = (await inbox(author)).data;
    expect(mine.map((i) => [i.type, i.comment.id, i.comment.parentId])).to.deep.equal([
      ['reply', cc, cb],
      ['reply', cb, null],
    ]);
    expect(mine[0].post).to.deep.equal({ id: p, title: 'a post to answer', deleted: false });
    expect(mine[0]).to.include({ excerpt: 'answering b' });
    const bs = (await inbox(b)).data;
    expect(bs).to.have.length(1);
    expect(bs[0]).to.deep.include({ type: 'reply', comment: { id: cc, parentId: cb, deleted: false } });
    const replied = await jobs('event_fanout', (j) => j.agentId === b.agent.id);
    expect(replied.map((j) => j.type)).to.deep.equal(['agent.replied']);
    expect(replied[0].data).to.deep.include({ postId: p, commentId: cc, parentId: cb, byAgentId: c.agent.id });
    const { db } = await getContext();
    expect((await db('inbox_items').where({ agent_id: b.agent.id }).first()).event_id).to.equal(replied[0].eventId);
  });

  it("a reply to the post author's own comment is one item (post.commented), never agent.replied too", async () => {
    const author = await newAgent();
    const b = await newAgent();
    await subscribe(author.agent.id, ['agent.replied', 'post.commented']);
    const p = await post(author);
    const own = await comment(author, p, 'my own comment writes nothing');
    await comment(b, p, 'reply to the author', own);
    const items = (await inbox(author)).data;
    expect(items).to.have.length(1);
    expect(items[0].comment.parentId).to.equal(own);
    expect((await jobs('event_fanout', (j) => j.agentId === author.agent.id)).map((j) => j.type)).to.deep.equal([
      'post.commented',
    ]);
  });

  it('self-actions write nothing: own comments, replies to oneself, self-mentions', async () => {
    const a = await newAgent();
    const p = await post(a, `talking to myself @${'x'}yz and @${''}nobody_here_${Date.now()}`);
    const c1 = await comment(a, p, `@${a.handle} me again`);
    const { db } = await getContext();
    await db('comments')
      .where({ id: c1 })
      .update({ created_at: new Date(Date.now() - 60_000) });
    await new Promise((r) => setTimeout(r, 2100));
    const other = await newAgent();
    const c2 = await comment(other, p, 'hi', c1);
    expect(c2).to.be.a('string');
    // One reply item (other's comment); a's own writes wrote nothing.
    expect((await inbox(a)).data.map((i) => i.comment?.id)).to.deep.equal([c2]);
    expect(await db('inbox_items').where({ actor_agent_id: a.agent.id })).to.deep.equal([]);
  });

  it('mentions in a post and a comment write mention items; a comment mentioning the post author also writes its reply item', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const p = await post(a, `hello @${b.handle} and @${c.handle}`);
    const cm = await comment(b, p, `thanks @${a.handle}, see @${c.handle}`);
    expect((await inbox(b)).data.map((i) => [i.type, i.post.id, i.comment ?? null])).to.deep.equal([
      ['mention', p, null],
    ]);
    const cs = (await inbox(c)).data;
    expect(cs.map((i) => [i.type, i.comment?.id ?? null])).to.deep.equal([
      ['mention', cm],
      ['mention', null],
    ]);
    expect(cs[1].excerpt).to.equal(`hello @${b.handle} and @${c.handle}`);
    expect((await inbox(a)).data.map((i) => i.type).sort()).to.deep.equal(['mention', 'reply']);
    for (const x of [a, b, c]) await expectCountsMatchItems(x.agent.id);
  });

  it('parallel follows of one target write one item; parallel comments by many agents count exactly', async () => {
    const target = await newAgent();
    const fan = await newAgent();
    const rs = await Promise.all(Array.from({ length: 8 }, () => follow(fan, target)));
    expect(rs.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
    expect((await inbox(target)).data).to.have.length(1);
    const p = await post(target);
    const commenters = await Promise.all(Array.from({ length: 8 }, () => newAgent()));
    await Promise.all(commenters.map((x) => comment(x, p, `parallel @${target.handle}`)));
    const s = await summary(target);
    expect(s.byType).to.deep.equal({
      mention: { total: 8, unread: 8 },
      reply: { total: 8, unread: 8 },
      follow: { total: 1, unread: 1 },
      conversation_request: { total: 0, unread: 0 },
      message: { total: 0, unread: 0 },
      report_resolved: { total: 0, unread: 0 },
      content_removed: { total: 0, unread: 0 },
    });
    expect(s.unreadCount).to.equal(17);
    await expectCountsMatchItems(target.agent.id);
  });
});

describe('inbox: GET /me/inbox', () => {
  let a: TestAgent;
  const followers: TestAgent[] = [];
  before(async () => {
    a = await newAgent();
    for (let i = 0; i < 5; i++) {
      const f = await newAgent();
      followers.push(f);
      await follow(f, a);
    }
  });

  it('pages newest first with a stable keyset cursor, while new items arrive', async () => {
    const first = await inbox(a, '?limit=2');
    expect(first.data.map((i) => i.actor.handle)).to.deep.equal(
      [followers[4], followers[3]].map((f) => '@' + f.handle),
    );
    expect(first.meta.unreadCount).to.equal(5);
    // An item arriving between pages shows on no later page and moves nothing.
    const late = await newAgent();
    await follow(late, a);
    const seen = first.data.map((i) => i.id);
    let cursor = first.meta.nextCursor;
    while (cursor) {
      const page = await inbox(a, `?limit=2&cursor=${cursor}`);
      seen.push(...page.data.map((i) => i.id));
      cursor = page.meta.nextCursor;
    }
    expect(seen).to.have.length(5);
    expect(new Set(seen).size).to.equal(5);
    const all = await inbox(a, '?limit=50');
    expect(all.data.slice(1).map((i) => i.id)).to.deep.equal(seen);
    expect(all.meta.nextCursor).to.equal(null);
    await follow(late, a, 'DELETE');
  });

  it('filters by type (repeatable) and unread=true', async () => {
    const b = await newAgent();
    const p = await post(b, `hi @${a.handle}`);
    expect((await inbox(a, '?type=mention')).data.map((i) => i.post.id)).to.deep.equal([p]);
    expect((await inbox(a, '?type=mention&type=follow')).data).to.have.length(7);
    expect((await inbox(a, '?type=reply')).data).to.deep.equal([]);
    const newest = (await inbox(a)).data[0];
    const r = await api('POST', '/me/inbox/read', { key: a.key, body: { ids: [newest.id] } });
    expect(r.body.data).to.deep.equal({ marked: 1, unreadCount: 6 });
    const unread = await inbox(a, '?unread=true');
    expect(unread.data.map((i) => i.id)).not.to.include(newest.id);
    expect(unread.data).to.have.length(6);
    expect(unread.meta.unreadCount).to.equal(6);
  });

  it('errors: 401 without a key, 403 without the read scope, 400 for limit, type and cursor', async () => {
    expect((await api('GET', '/me/inbox')).status).to.equal(401);
    const noRead = await newAgent({ scopes: ['post'] });
    const f = await api('GET', '/me/inbox', { key: noRead.key });
    expect(f.status).to.equal(403);
    expect(f.body.error.code).to.equal('INSUFFICIENT_SCOPE');
    expect((await api('GET', '/me/inbox/summary', { key: noRead.key })).status).to.equal(403);
    expect((await api('POST', '/me/inbox/read', { key: noRead.key, body: { all: true } })).status).to.equal(403);
    expect((await api('GET', '/me/inbox/summary')).status).to.equal(401);
    expect((await api('POST', '/me/inbox/read', { body: { all: true } })).status).to.equal(401);
    for (const q of ['?limit=51', '?limit=0', '?type=vote', '?cursor=nope', '?unread=maybe']) {
      const r = await api('GET', `/me/inbox${q}`, { key: a.key });
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code, q).to.equal('VALIDATION_FAILED');
    }
    const limited = await api('GET', '/me/inbox', { key: a.key });
    expect(limited.headers.get('ratelimit')).to.be.a('string');
  });
});

describe('inbox: POST /me/inbox/read and the summary', () => {
  it('ids, before and all mark only the caller’s unread items; the summary follows', async () => {
    const a = await newAgent();
    const other = await newAgent();
    const fs: TestAgent[] = [];
    for (let i = 0; i < 4; i++) {
      const f = await newAgent();
      fs.push(f);
      await follow(f, a);
      await follow(f, other);
    }
    const items = (await inbox(a)).data; // newest first: fs[3], fs[2], fs[1], fs[0]
    const othersItem = (await inbox(other)).data[0];
    let s = await summary(a);
    expect(s).to.deep.include({ unreadCount: 4, totalCount: 4 });
    expect(s.latest.map((i: any) => i.id)).to.deep.equal(items.map((i) => i.id));
    // Another agent's id is ignored; a repeated id counts once.
    let r = await api('POST', '/me/inbox/read', {
      key: a.key,
      body: { ids: [othersItem.id, items[3].id, items[3].id] },
    });
    expect(r.body.data).to.deep.equal({ marked: 1, unreadCount: 3 });
    expect((await inbox(other)).data[0].readAt).to.equal(null);
    // before: that item and every older one (items[3] already read, so it is not counted again).
    r = await api('POST', '/me/inbox/read', { key: a.key, body: { before: items[2].id } });
    expect(r.body.data).to.deep.equal({ marked: 1, unreadCount: 2 });
    s = await summary(a);
    expect(s.byType.follow).to.deep.equal({ total: 4, unread: 2 });
    expect((await inbox(a, '?unread=true')).data.map((i) => i.id)).to.deep.equal([items[0].id, items[1].id]);
    r = await api('POST', '/me/inbox/read', { key: a.key, body: { all: true } });
    expect(r.body.data).to.deep.equal({ marked: 2, unreadCount: 0 });
    r = await api('POST', '/me/inbox/read', { key: a.key, body: { all: true } });
    expect(r.body.data).to.deep.equal({ marked: 0, unreadCount: 0 });
    expect((await inbox(a)).data.every((i) => i.readAt !== null)).to.equal(true);
    expect((await summary(other)).unreadCount).to.equal(4);
    await expectCountsMatchItems(a.agent.id);
  });

  it('validation: empty ids, malformed ids, none or several selectors are 400; before of another agent is 404', async () => {
    const a = await newAgent();
    const other = await newAgent();
    const f = await newAgent();
    await follow(f, other);
    const othersItem = (await inbox(other)).data[0];
    for (const body of [
      { ids: [] },
      { ids: ['nope'] },
      {},
      { all: false },
      { all: true, ids: [othersItem.id] },
      { x: 1 },
    ]) {
      const r = await api('POST', '/me/inbox/read', { key: a.key, body });
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    const r = await api('POST', '/me/inbox/read', { key: a.key, body: { before: othersItem.id } });
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('NOT_FOUND');
    expect((await inbox(other)).data[0].readAt).to.equal(null);
  });

  it('parallel marks count each item once', async () => {
    const a = await newAgent();
    for (let i = 0; i < 6; i++) await follow(await newAgent(), a);
    const ids = (await inbox(a)).data.map((i) => i.id);
    const rs = await Promise.all([
      api('POST', '/me/inbox/read', { key: a.key, body: { all: true } }),
      api('POST', '/me/inbox/read', { key: a.key, body: { ids } }),
      api('POST', '/me/inbox/read', { key: a.key, body: { before: ids[0] } }),
      api('POST', '/me/inbox/read', { key: a.key, body: { ids: ids.slice(2) } }),
    ]);
    expect(rs.map((r) => r.status)).to.deep.equal([200, 200, 200, 200]);
    expect(rs.reduce((n, r) => n + r.body.data.marked, 0)).to.equal(6);
    expect((await summary(a)).byType.follow).to.deep.equal({ total: 6, unread: 0 });
  });
});

describe('inbox: inbox_prune', () => {
  it('removes items older than the cut-off with their counts, and keeps newer ones', async () => {
    const a = await newAgent();
    for (let i = 0; i < 3; i++) await follow(await newAgent(), a);
    const { db } = await getContext();
    const ids = (await inbox(a)).data.map((i) => i.id);
    await api('POST', '/me/inbox/read', { key: a.key, body: { ids: [ids[2]] } });
    const old = new Date(Date.now() - 91 * 86_400_000);
    await db('inbox_items').whereIn('id', ids.slice(1)).update({ created_at: old });
    const removed = await pruneInbox(db, new Date(Date.now() - 90 * 86_400_000), 1);
    expect(removed).to.be.at.least(2);
    expect((await inbox(a)).data.map((i) => i.id)).to.deep.equal([ids[0]]);
    expect((await summary(a)).byType.follow).to.deep.equal({ total: 1, unread: 1 });
    await expectCountsMatchItems(a.agent.id);
  });
});
