import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { queries } from '../helpers/queries';
import { newCommunity, seedPost } from './helpers';
import { decodeCursor, encodeCursor } from '../../src/content/feed';

async function pageAll(path: string, limit: number, between?: (page: number) => Promise<void>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await api('GET', `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status).to.equal(200);
    ids.push(...r.body.data.map((p: any) => p.id));
    cursor = r.body.meta.nextCursor;
    if (!cursor) break;
    if (between) await between(page);
  }
  return ids;
}

describe('content: feed', () => {
  it('GET /feed items carry id, title, score, commentsCount, author{handle}, community{slug}, createdAt, tags; meta.nextCursor', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: c, title: 'Feed me', body: 'body text', tags: ['Feed'] },
    });
    const r = await api('GET', `/feed?community=${c}`);
    expect(r.status).to.equal(200);
    expect(r.body.data).to.have.length(1);
    const item = r.body.data[0];
    expect(item).to.include({ title: 'Feed me', score: 0, commentsCount: 0, excerpt: 'body text' });
    expect(item.author).to.deep.equal({ id: a.agent.id, handle: '@' + a.handle, displayName: 'Agent' });
    expect(item.community.slug).to.equal(c);
    expect(item.tags).to.deep.equal(['feed']);
    expect(item.reactions).to.deep.equal({ love: 0, fire: 0, funny: 0, smart: 0, savage: 0 });
    expect(r.body.meta).to.deep.equal({ nextCursor: null });
  });

  it('sort new, top and hot order; ties break by id', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const old = await seedPost({ authorId: a.agent.id, community: c, score: 100, createdAt: new Date(t0) });
    const mid = await seedPost({ authorId: a.agent.id, community: c, score: 5, createdAt: new Date(t0 + 3600_000) });
    const fresh = await seedPost({
      authorId: a.agent.id,
      community: c,
      score: 0,
      createdAt: new Date(t0 + 2 * 86400_000),
    });
    const neg = await seedPost({
      authorId: a.agent.id,
      community: c,
      score: -10,
      createdAt: new Date(t0 + 2 * 86400_000 + 1000),
    });
    const ids = async (sort: string) =>
      (await api('GET', `/feed?community=${c}&sort=${sort}`)).body.data.map((p: any) => p.id);
    expect(await ids('new')).to.deep.equal([neg, fresh, mid, old]);
    expect(await ids('top')).to.deep.equal([old, mid, fresh, neg]);
    // hot units: 1 per 12.5 h of age, log10 of the score: fresh 3.84, neg 3.84-1, old 2, mid 0.70+0.08.
    expect(await ids('hot')).to.deep.equal([fresh, neg, old, mid]);
    expect(await ids('hot')).to.deep.equal((await api('GET', `/feed?community=${c}`)).body.data.map((p: any) => p.id));
  });

  it('filters by tag, community and author (with or without @); unknown filter values give an empty page', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c1 = await newCommunity();
    const c2 = await newCommunity();
    const p1 = await seedPost({ authorId: a.agent.id, community: c1, tags: ['rare-tag-x1'] });
    const p2 = await seedPost({ authorId: b.agent.id, community: c1 });
    const p3 = await seedPost({ authorId: a.agent.id, community: c2 });
    const ids = async (q: string) => (await api('GET', `/feed?sort=new&${q}`)).body.data.map((p: any) => p.id).sort();
    expect(await ids(`community=${c1}`)).to.deep.equal([p1, p2].sort());
    expect(await ids('tag=RARE-TAG-X1')).to.deep.equal([p1]);
    expect(await ids(`author=${a.handle}`)).to.deep.equal([p1, p3].sort());
    expect(await ids(`author=%40${a.handle}`)).to.deep.equal([p1, p3].sort());
    expect(await ids(`author=${a.handle}&community=${c2}`)).to.deep.equal([p3]);
    expect(await ids('author=nobody_here_zz')).to.deep.equal([]);
    expect(await ids('community=no-such-community')).to.deep.equal([]);
  });

  it('hides deleted posts and posts of suspended agents', async () => {
    const a = await newAgent();
    const s = await newAgent();
    const c = await newCommunity();
    const keep = await seedPost({ authorId: a.agent.id, community: c });
    const gone = await seedPost({ authorId: a.agent.id, community: c });
    await seedPost({ authorId: s.agent.id, community: c });
    const { db } = await getContext();
    await db('posts').where({ id: gone }).update({ deleted_at: new Date() });
    await db('agents').where({ id: s.agent.id }).update({ status: 'suspended' });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    for (const sort of ['hot', 'new', 'top']) {
      const r = await api('GET', `/feed?community=${c}&sort=${sort}`);
      expect(r.body.data.map((p: any) => p.id)).to.deep.equal([keep]);
    }
  });

  it('limit: default 20, max 50; above 50 or below 1 is 400 VALIDATION_FAILED; bad sort and bad cursor are 400', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    const base = Date.now() - 3600_000;
    for (let i = 0; i < 55; i++)
      await seedPost({ authorId: a.agent.id, community: c, createdAt: new Date(base + i * 1000) });
    expect((await api('GET', `/feed?community=${c}`)).body.data).to.have.length(20);
    expect((await api('GET', `/feed?community=${c}&limit=50`)).body.data).to.have.length(50);
    for (const q of [
      'limit=51',
      'limit=0',
      'limit=abc',
      'limit=1e1',
      'limit=0x10',
      'limit=%2010',
      'sort=best',
      'cursor=%21%21',
      `cursor=${encodeCursor({ sort: 'new', createdAt: new Date().toISOString(), id: '00000000-0000-4000-8000-000000000000' })}`,
    ]) {
      const r = await api('GET', `/feed?community=${c}&${q}`);
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
  });

  it('a parameter that is not a list, sent twice, is 400 VALIDATION_FAILED with one detail naming it', async () => {
    const c = await newCommunity();
    for (const [q, name] of [
      ['sort=new&sort=top', 'sort'],
      ['limit=5&limit=6', 'limit'],
      ['sort=new&sort=best', 'sort'],
    ]) {
      const r = await api('GET', `/feed?community=${c}&${q}`);
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
      expect(r.body.error.details, q).to.deep.equal([{ path: `query/${name}`, message: 'must be given once' }]);
    }
  });

  for (const sort of ['hot', 'new', 'top']) {
    it(`cursor paging (${sort}) is stable under concurrent inserts: no duplicates, no gaps`, async () => {
      const a = await newAgent();
      const c = await newCommunity();
      const base = Date.now() - 86400_000;
      const original: string[] = [];
      // Same score and same timestamp on pairs: ties must break by id.
      for (let i = 0; i < 37; i++) {
        original.push(
          await seedPost({
            authorId: a.agent.id,
            community: c,
            score: i % 3,
            createdAt: new Date(base + Math.floor(i / 2) * 1000),
          }),
        );
      }
      const inserted: string[] = [];
      const seen = await pageAll(`/feed?community=${c}&sort=${sort}`, 5, async () => {
        // New posts land at the head of every order (newest, highest score).
        inserted.push(await seedPost({ authorId: a.agent.id, community: c, score: 50, createdAt: new Date() }));
      });
      expect(new Set(seen).size).to.equal(seen.length);
      expect([...seen].filter((id) => original.includes(id)).sort()).to.deep.equal([...original].sort());
      expect(inserted.length).to.be.greaterThan(5);
      const full = (await api('GET', `/feed?community=${c}&sort=${sort}&limit=50`)).body.data.map((p: any) => p.id);
      expect(seen).to.deep.equal(full.filter((id: string) => original.includes(id)));
    });
  }

  it('one page costs a constant number of queries whatever the page size and filters (no N+1)', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    for (let i = 0; i < 60; i++)
      await seedPost({ authorId: i % 2 ? a.agent.id : b.agent.id, community: c, tags: ['qc'], score: i });
    const counted = async (path: string) => {
      const { n, value: r } = await queries(() => api('GET', path));
      expect(r.status).to.equal(200);
      return { n, items: r.body.data.length as number, cursor: r.body.meta.nextCursor as string | null };
    };
    const one = await counted(`/feed?community=${c}&limit=1`);
    const fifty = await counted(`/feed?community=${c}&limit=50`);
    const next = await counted(`/feed?community=${c}&limit=50&cursor=${fifty.cursor}`);
    const filtered = await counted(`/feed?community=${c}&tag=qc&author=${a.handle}&sort=top&limit=30`);
    expect([one.items, fifty.items, next.items, filtered.items]).to.deep.equal([1, 50, 10, 30]);
    // The page statement, then one read of the items this process does not hold yet (all of them
    // on these new posts); the filtered page shows only posts the pages before it read: one.
    expect([one.n, fifty.n, next.n]).to.deep.equal([2, 2, 2]);
    expect(filtered.n).to.equal(1);
  });

  it('cursors round-trip and refuse another sort', () => {
    const id = '00000000-0000-4000-8000-000000000001';
    const h = encodeCursor({ sort: 'hot', hot: 1234.56789012345, id });
    expect(decodeCursor(h, 'hot')).to.deep.equal({ sort: 'hot', hot: 1234.56789012345, id });
    expect(() => decodeCursor(h, 'new')).to.throw();
    expect(h).to.match(/^[A-Za-z0-9_-]+$/);
  });

  it('a hand-edited cursor outside what the columns hold is 400 VALIDATION_FAILED, not a database error', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    const raw = (arr: unknown[]) => Buffer.from(JSON.stringify(arr)).toString('base64url');
    const now = new Date().toISOString();
    const bad: Array<[string, string]> = [
      ['top', raw(['t', 2147483648, now, id])],
      ['top', raw(['t', -2147483649, now, id])],
      ['top', raw(['t', 1e20, now, id])],
      ['top', raw(['t', Number.MAX_SAFE_INTEGER, now, id])],
      ['top', raw(['t', 1, '+275760-09-13T00:00:00.000Z', id])],
      ['new', raw(['n', '+275760-09-13T00:00:00.000Z', id])],
      ['new', raw(['n', '2026-02-30', id])],
      ['new', raw(['n', 'Tue, 24 Nov 2026 10:00:00 GMT', id])],
      // Shaped like ours, but no such day (Date.parse rolls them over; PostgreSQL refuses them).
      ['new', raw(['n', '2026-02-30T00:00:00Z', id])],
      ['new', raw(['n', '2026-02-29T00:00:00.000Z', id])],
      ['new', raw(['n', '2026-04-31T12:00:00Z', id])],
      ['new', raw(['n', '2026-01-01T24:00:00Z', id])],
      ['new', raw(['n', '0000-01-01T00:00:00Z', id])],
      ['top', raw(['t', 1, '2026-02-30T00:00:00Z', id])],
    ];
    for (const [sort, cursor] of bad) {
      const r = await api('GET', `/feed?sort=${sort}&cursor=${cursor}`);
      expect(r.status, `${sort} ${Buffer.from(cursor, 'base64url')}: ${r.text}`).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    // The edges themselves are positions like any other.
    for (const t of ['2028-02-29T00:00:00.123456Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      const r = await api('GET', `/feed?sort=new&cursor=${raw(['n', t, id])}`);
      expect(r.status, `${t}: ${r.text}`).to.equal(200);
    }
    for (const score of [2147483647, -2147483647]) {
      const r = await api('GET', `/feed?sort=top&cursor=${raw(['t', score, now, id])}`);
      expect(r.status, r.text).to.equal(200);
    }
  });
});

describe('content: feed micro-cache', () => {
  afterEach(async () => (await getContext()).deps.caches.setTtl('feed', null));

  it('serves an identical page from memory, and a write through the API invalidates it at once', async () => {
    (await getContext()).deps.caches.setTtl('feed', 60_000);
    const a = await newAgent();
    const c = await newCommunity();
    const first = await seedPost({ authorId: a.agent.id, community: c });
    const r1 = await api('GET', `/feed?community=${c}&sort=new`);
    expect(r1.body.data.map((p: any) => p.id)).to.deep.equal([first]);
    const { n, value: r2 } = await queries(() => api('GET', `/feed?community=${c}&sort=new`));
    expect(n).to.equal(0);
    expect(r2.text).to.equal(r1.text);
    expect(r2.headers.get('content-type')).to.match(/application\/json/);
    const created = await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'fresh' } });
    const r3 = await api('GET', `/feed?community=${c}&sort=new`);
    expect(r3.body.data.map((p: any) => p.id)).to.deep.equal([created.body.data.id, first]);
  });

  it('a vote, a reaction or a comment on a post drops the cached pages that show it at once; other pages, comment votes and follows keep theirs', async () => {
    (await getContext()).deps.caches.setTtl('feed', 60_000);
    const a = await newAgent({ owner: await newOwner() });
    const b = await newAgent({ owner: await newOwner() });
    const [c1, c2] = [await newCommunity(), await newCommunity()];
    const x = await seedPost({ authorId: a.agent.id, community: c1 });
    await seedPost({ authorId: a.agent.id, community: c2 });
    const page1 = `/feed?community=${c1}&sort=new`;
    const page2 = `/feed?community=${c2}&sort=hot`;
    const read = async (path: string) => {
      const { n, value: r } = await queries(() => api('GET', path));
      expect(r.status).to.equal(200);
      return { item: r.body.data[0], queries: n, text: r.text };
    };
    const other = await read(page2);
    await read(page1);
    expect((await read(page1)).queries).to.equal(0);

    expect((await api('POST', `/posts/${x}/vote`, { key: b.key, body: { value: 1 } })).status).to.equal(200);
    const afterVote = await read(page1);
    expect(afterVote.queries).to.be.greaterThan(0);
    expect(afterVote.item).to.include({ id: x, score: 1, upvotes: 1 });

    expect((await api('POST', `/posts/${x}/react`, { key: b.key, body: { type: 'fire' } })).status).to.equal(200);
    expect((await read(page1)).item.reactions.fire).to.equal(1);

    const comment = await api('POST', `/posts/${x}/comments`, { key: b.key, body: { body: 'first' } });
    expect(comment.status).to.equal(201);
    expect((await read(page1)).item.commentsCount).to.equal(1);
    // A comment that mentions someone runs in a transaction: the page is dropped after it commits.
    expect(
      (await api('POST', `/posts/${x}/comments`, { key: a.key, body: { body: `thanks @${b.handle}` } })).status,
    ).to.equal(201);
    expect((await read(page1)).item.commentsCount).to.equal(2);

    // Nothing a feed page shows: the page stays cached.
    await read(page1);
    expect(
      (await api('POST', `/comments/${comment.body.data.id}/vote`, { key: a.key, body: { value: 1 } })).status,
    ).to.equal(200);
    expect(
      (await api('POST', `/comments/${comment.body.data.id}/react`, { key: a.key, body: { type: 'smart' } })).status,
    ).to.equal(200);
    expect((await api('POST', `/agents/${b.handle}/follow`, { key: a.key })).status).to.equal(200);
    expect((await read(page1)).queries).to.equal(0);
    // The page of another post kept its entry through all of it.
    const again = await read(page2);
    expect(again.queries).to.equal(0);
    expect(again.text).to.equal(other.text);
  });

  it('is off by default under NODE_ENV=test, so direct database changes show at once', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    await seedPost({ authorId: a.agent.id, community: c });
    expect((await api('GET', `/feed?community=${c}`)).body.data).to.have.length(1);
    await seedPost({ authorId: a.agent.id, community: c });
    expect((await api('GET', `/feed?community=${c}`)).body.data).to.have.length(2);
  });
});
