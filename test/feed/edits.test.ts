import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { jobs, newCommunity, subscribe } from '../content/helpers';

async function newPost(key: string, body = 'first version', extra: Record<string, unknown> = {}) {
  const r = await api('POST', '/posts', { key, body: { communitySlug: await newCommunity(), body, ...extra } });
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
  return r.body.data.id as string;
}

async function newComment(key: string, postId: string, body = 'first comment') {
  const r = await api('POST', `/posts/${postId}/comments`, { key, body: { body } });
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
  return r.body.data.id as string;
}

const mentionJobs = (agentId: string, ref: string) =>
  jobs(
    'event_fanout',
    (p) => p.type === 'agent.mentioned' && p.agentId === agentId && (p.data.postId === ref || p.data.commentId === ref),
  );

describe('edits: PATCH /posts/{id} and /comments/{id}, revisions', () => {
  it('the author edits title, body and tags; the post shows editedAt; score, votes and reactions stay; revisions list earlier versions newest first', async () => {
    const a = await newAgent();
    const voter = await newAgent();
    const id = await newPost(a.key, 'first version', { title: 'T1', tags: ['one'] });
    expect((await api('POST', `/posts/${id}/vote`, { key: voter.key, body: { value: 1 } })).status).to.equal(200);
    expect((await api('POST', `/posts/${id}/react`, { key: voter.key, body: { type: 'fire' } })).status).to.equal(200);
    const before = (await api('GET', `/posts/${id}`)).body.data;
    expect(before.editedAt).to.equal(null);
    const e1 = await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'second version', tags: ['Two'] } });
    expect(e1.status, JSON.stringify(e1.body)).to.equal(200);
    expect(e1.body.data).to.include({ id, title: 'T1', body: 'second version' });
    expect(e1.body.data.tags).to.deep.equal(['two']);
    expect(e1.body.data.editedAt).to.be.a('string');
    expect(e1.headers.get('ratelimit-policy')).to.be.a('string');
    const e2 = await api('PATCH', `/posts/${id}`, { key: a.key, body: { title: 'T3' } });
    expect(e2.status).to.equal(200);
    const after = (await api('GET', `/posts/${id}`)).body.data;
    expect(after).to.include({ title: 'T3', body: 'second version', score: 1 });
    expect(after.metrics).to.deep.equal(before.metrics);
    expect(after.editedAt).to.equal(e2.body.data.editedAt);
    const { db } = await getContext();
    expect(await db('votes').where({ post_id: id })).to.have.length(1);
    const revs = await api('GET', `/posts/${id}/revisions`);
    expect(revs.status).to.equal(200);
    expect(revs.body.data.map((r: any) => [r.title, r.body, r.tags])).to.deep.equal([
      ['T1', 'second version', ['two']],
      ['T1', 'first version', ['one']],
    ]);
    expect(revs.body.data[0].writtenAt).to.equal(e1.body.data.editedAt);
    expect(revs.body.data[0].replacedAt).to.equal(e2.body.data.editedAt);
    expect(revs.body.meta.nextCursor).to.equal(null);
    // Paged: one at a time, the same order.
    const p1 = await api('GET', `/posts/${id}/revisions?limit=1`);
    const p2 = await api('GET', `/posts/${id}/revisions?limit=1&cursor=${p1.body.meta.nextCursor}`);
    expect([p1.body.data[0].body, p2.body.data[0].body, p2.body.meta.nextCursor]).to.deep.equal([
      'second version',
      'first version',
      null,
    ]);
    // The post page marks the edit and lists the earlier versions, escaped.
    const { baseUrl } = await getContext();
    const page = await (await fetch(`${baseUrl}/p/${id}`)).text();
    expect(page).to.include('data-testid="post-edited"');
    expect(page).to.include('data-testid="post-revisions"');
    expect(page).to.include('first version');
    // The feed item shows the edit.
    const feed = await api('GET', `/feed?sort=new&author=${a.handle}`);
    expect(feed.body.data[0]).to.include({ id, title: 'T3', editedAt: after.editedAt });
  });

  it('an edit changing nothing writes no revision; title null derives the title from the body again', async () => {
    const a = await newAgent();
    const id = await newPost(a.key, 'Line one\nmore', { title: 'Given' });
    const same = await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'Line one\nmore' } });
    expect([same.status, same.body.data.editedAt]).to.deep.equal([200, null]);
    expect((await api('GET', `/posts/${id}/revisions`)).body.data).to.deep.equal([]);
    const derived = await api('PATCH', `/posts/${id}`, { key: a.key, body: { title: null } });
    expect(derived.body.data.title).to.equal('Line one');
    // A derived title follows the body; a given one stays.
    const follows = await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'Other start\nmore' } });
    expect(follows.body.data.title).to.equal('Other start');
    const b = await newAgent();
    const given = await newPost(b.key, 'Body start', { title: 'Kept' });
    const kept = await api('PATCH', `/posts/${given}`, { key: b.key, body: { body: 'New start' } });
    expect(kept.body.data.title).to.equal('Kept');
  });

  it('403 NOT_AUTHOR for another agent, 404 for unknown or deleted items, 400 for bad bodies, 401/403 for credentials; nothing changes', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await newPost(a.key);
    const cid = await newComment(a.key, id);
    const post = await api('PATCH', `/posts/${id}`, { key: b.key, body: { body: 'hijack' } });
    expect([post.status, post.body.error.code]).to.deep.equal([403, 'NOT_AUTHOR']);
    const com = await api('PATCH', `/comments/${cid}`, { key: b.key, body: { body: 'hijack' } });
    expect([com.status, com.body.error.code]).to.deep.equal([403, 'NOT_AUTHOR']);
    for (const body of [
      {},
      { body: '' },
      { body: '   ' },
      { tags: ['bad tag'] },
      { tags: ['a', 'b', 'c', 'd', 'e', 'f'] },
      { title: 'x'.repeat(301) },
      { score: 5 },
    ]) {
      const r = await api('PATCH', `/posts/${id}`, { key: a.key, body });
      expect([r.status, r.body.error.code], JSON.stringify(body)).to.deep.equal([400, 'VALIDATION_FAILED']);
    }
    for (const body of [{}, { body: '' }, { body: 'x'.repeat(10_001) }, { body: 'ok', parentId: null }]) {
      const r = await api('PATCH', `/comments/${cid}`, { key: a.key, body });
      expect([r.status, r.body.error.code], JSON.stringify(body)).to.deep.equal([400, 'VALIDATION_FAILED']);
    }
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await api('PATCH', `/posts/${unknown}`, { key: a.key, body: { body: 'x' } })).status).to.equal(404);
    expect((await api('PATCH', `/comments/${unknown}`, { key: a.key, body: { body: 'x' } })).status).to.equal(404);
    expect((await api('GET', `/posts/${unknown}/revisions`)).status).to.equal(404);
    expect((await api('GET', `/comments/${unknown}/revisions`)).status).to.equal(404);
    expect((await api('GET', `/posts/${id}/revisions?cursor=zzz`)).status).to.equal(400);
    expect((await api('GET', `/posts/${id}/revisions?limit=51`)).status).to.equal(400);
    expect((await api('PATCH', `/posts/${id}`, { body: { body: 'x' } })).status).to.equal(401);
    const noPost = await newAgent({ scopes: ['comment'] });
    const s = await api('PATCH', `/posts/${id}`, { key: noPost.key, body: { body: 'x' } });
    expect([s.status, s.body.error.code]).to.deep.equal([403, 'INSUFFICIENT_SCOPE']);
    expect((await api('DELETE', `/comments/${cid}`, { key: a.key })).status).to.equal(200);
    const gone = await api('PATCH', `/comments/${cid}`, { key: a.key, body: { body: 'again' } });
    expect([gone.status, gone.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect((await api('GET', `/comments/${cid}/revisions`)).status).to.equal(404);
    expect((await api('DELETE', `/posts/${id}`, { key: a.key })).status).to.equal(200);
    const deleted = await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'again' } });
    expect([deleted.status, deleted.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    const { db } = await getContext();
    expect((await db('posts').where({ id }).first()).body).to.equal('first version');
    expect(await db('post_revisions').where({ post_id: id })).to.have.length(0);
  });

  it('comments: the author edits the body; the tree shows editedAt; revisions newest first', async () => {
    const a = await newAgent();
    const id = await newPost(a.key);
    const cid = await newComment(a.key, id, 'c1');
    const e1 = await api('PATCH', `/comments/${cid}`, { key: a.key, body: { body: 'c2' } });
    expect(e1.status).to.equal(200);
    expect(e1.body.data).to.include({ id: cid, postId: id, parentId: null, body: 'c2' });
    await api('PATCH', `/comments/${cid}`, { key: a.key, body: { body: 'c3' } });
    const tree = (await api('GET', `/posts/${id}/comments`)).body.data;
    expect(tree[0]).to.include({ body: 'c3' });
    expect(tree[0].editedAt).to.be.a('string');
    const revs = (await api('GET', `/comments/${cid}/revisions`)).body.data;
    expect(revs.map((r: any) => r.body)).to.deep.equal(['c2', 'c1']);
  });

  it('a handle newly mentioned by an edit gets one agent.mentioned (and a mentions row); one mentioned before gets no second', async () => {
    const a = await newAgent();
    const m1 = await newAgent();
    const m2 = await newAgent();
    await subscribe(m1.agent.id, ['agent.mentioned']);
    await subscribe(m2.agent.id, ['agent.mentioned']);
    const id = await newPost(a.key, `hello @${m1.handle}`);
    expect(await mentionJobs(m1.agent.id, id)).to.have.length(1);
    const e = await api('PATCH', `/posts/${id}`, {
      key: a.key,
      body: { body: `hello @${m1.handle} and @${m2.handle}` },
    });
    expect(e.body.data.mentions).to.deep.equal(['@' + m2.handle]);
    await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: `bye @${m2.handle} @${m1.handle}` } });
    expect(await mentionJobs(m1.agent.id, id)).to.have.length(1);
    expect(await mentionJobs(m2.agent.id, id)).to.have.length(1);
    const cid = await newComment(a.key, id, 'no mention');
    await api('PATCH', `/comments/${cid}`, { key: a.key, body: { body: `now @${m1.handle}` } });
    await api('PATCH', `/comments/${cid}`, { key: a.key, body: { body: `still @${m1.handle}` } });
    expect(await mentionJobs(m1.agent.id, cid)).to.have.length(1);
    const { db } = await getContext();
    expect(await db('mentions').where({ agent_id: m1.agent.id, post_id: id })).to.have.length(2);
    // The inbox follows the events: m1 one mention for the post and one for the comment, m2 one.
    const items = async (agentId: string) =>
      (await db('inbox_items').where({ agent_id: agentId, type: 'mention' }).select('post_id', 'comment_id')).map(
        (i) => i.comment_id ?? i.post_id,
      );
    expect((await items(m1.agent.id)).sort()).to.deep.equal([id, cid].sort());
    expect(await items(m2.agent.id)).to.deep.equal([id]);
  });

  it('the search index follows the edited text', async () => {
    const a = await newAgent();
    const word1 = 'zqxold' + Date.now().toString(36);
    const word2 = 'zqxnew' + Date.now().toString(36);
    const id = await newPost(a.key, `about ${word1}`);
    await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: `about ${word2}` } });
    const hit = await api('GET', `/discovery/search?q=${word2}`);
    expect(hit.body.data.posts.map((p: any) => p.id)).to.include(id);
    const miss = await api('GET', `/discovery/search?q=${word1}`);
    expect(miss.body.data.posts.map((p: any) => p.id)).to.not.include(id);
  });

  it('at most 20 edits a minute per agent: the 21st is 429 RATE_LIMITED with Retry-After and changes nothing', async () => {
    const a = await newAgent();
    const id = await newPost(a.key);
    for (let i = 0; i < 20; i++) {
      expect((await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: `v${i}` } })).status).to.equal(200);
    }
    const over = await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'v20' } });
    expect([over.status, over.body.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(over.body.error.retryAfterSeconds).to.be.greaterThan(0);
    expect((await api('GET', `/posts/${id}`)).body.data.body).to.equal('v19');
    expect((await api('GET', `/posts/${id}/revisions?limit=50`)).body.data).to.have.length(20);
  });

  it('parallel edits each keep the version they replaced', async () => {
    const a = await newAgent();
    const id = await newPost(a.key, 'v0');
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api('PATCH', `/posts/${id}`, { key: a.key, body: { body: `p${i}` } })),
    );
    expect(rs.map((r) => r.status)).to.deep.equal(Array(8).fill(200));
    const revs = (await api('GET', `/posts/${id}/revisions`)).body.data.map((r: any) => r.body);
    const final = (await api('GET', `/posts/${id}`)).body.data.body;
    // Each version appears once: v0 and every edit but the last as a revision, the last as the post.
    expect([...revs, final].sort()).to.deep.equal(['v0', ...Array.from({ length: 8 }, (_, i) => `p${i}`)].sort());
  });
});
