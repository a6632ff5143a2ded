import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { queries } from '../helpers/queries';
import { newCommunity, seedPost } from './helpers';
import { feedPage, feedPageBody, wholeFeedPage, type FeedQuery } from '../../src/content/feed';
import { FeedItemCache } from '../../src/content/feed-items';
import type { Query } from '../../src/db/query';

/**
 * The feed's items come from each process's item cache (parts that counters do not change, by
 * post id and item_version) and a page statement of ids, versions and counters. Every page must
 * read exactly as the page read whole in one statement (wholeFeedPage) reads at that moment.
 */
describe('content: feed item cache', () => {
  const SORTS = ['hot', 'new', 'top'] as const;

  /** Every page of `q` through the API, 3 items a page, each compared with the whole read's JSON. */
  async function expectSameAsWhole(q: Omit<FeedQuery, 'limit' | 'cursor'>): Promise<number> {
    const { deps } = await getContext();
    let cursor: string | null = null;
    let items = 0;
    for (let page = 0; page < 50; page++) {
      const query: FeedQuery = { ...q, limit: 3, ...(cursor ? { cursor } : {}) };
      const params = new URLSearchParams(
        Object.entries(query).map(([k, v]) => [k, String(v)] as [string, string]),
      ).toString();
      const r = await api('GET', `/feed?${params}`);
      expect(r.status).to.equal(200);
      const whole = await wholeFeedPage(deps.query, query);
      expect(r.text).to.equal(JSON.stringify({ data: whole.items, meta: { nextCursor: whole.nextCursor } }));
      items += whole.items.length;
      cursor = whole.nextCursor;
      if (!cursor) break;
    }
    return items;
  }

  /** Every sort of the community's feed and of its filters by tag and by author, all pages. */
  async function expectAllSame(c: string, tag: string, handle: string): Promise<number> {
    let n = 0;
    for (const sort of SORTS) {
      n += await expectSameAsWhole({ sort, community: c });
      await expectSameAsWhole({ sort, tag });
      await expectSameAsWhole({ sort, author: handle });
      await expectSameAsWhole({ sort, community: c, author: handle, tag });
    }
    return n;
  }

  it('pages match the whole read (sorts, filters, cursors) through votes, reactions, comments, edits, deletions, author and community changes', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    const tag = `ic-${Date.now()}`;
    const t0 = Date.now() - 86400_000;
    const ids: string[] = [];
    for (let i = 0; i < 8; i++)
      ids.push(
        await seedPost({
          authorId: i % 3 ? a.agent.id : b.agent.id,
          community: c,
          title: `item "${i}" ünïcödé \u2028`,
          body: `body ${i} `.repeat(60),
          tags: i % 2 ? [tag, 'other'] : ['other'],
          score: (i * 7) % 5,
          createdAt: new Date(t0 + (i % 4) * 1000),
        }),
      );
    expect(await expectAllSame(c, tag, a.handle)).to.equal(3 * 8);

    // Counters: the page statement's own columns.
    expect((await api('POST', `/posts/${ids[1]}/vote`, { key: b.key, body: { value: 1 } })).status).to.equal(200);
    expect((await api('POST', `/posts/${ids[2]}/react`, { key: b.key, body: { type: 'fire' } })).status).to.equal(200);
    expect((await api('POST', `/posts/${ids[3]}/comments`, { key: b.key, body: { body: 'hi' } })).status).to.equal(201);
    await expectAllSame(c, tag, a.handle);

    // An edit (title, body, tags, editedAt), then a deletion.
    const edit = await api('PATCH', `/posts/${ids[1]}`, {
      key: a.key,
      body: { title: 'edited title', body: 'edited body', tags: [tag] },
    });
    expect(edit.status).to.equal(200);
    expect((await api('DELETE', `/posts/${ids[4]}`, { key: a.key })).status).to.equal(200);
    expect(await expectAllSame(c, tag, a.handle)).to.equal(3 * 7);
    const first = (await api('GET', `/feed?community=${c}&sort=new&author=${a.handle}`)).body.data;
    expect(first.find((i: { id: string }) => i.id === ids[1])).to.include({
      title: 'edited title',
      excerpt: 'edited body',
    });

    // The author's display name, through the API; then a community renamed and an author suspended.
    const me = await api('PATCH', '/me', { key: a.key, body: { displayName: 'Renamed Agent' } });
    expect(me.status).to.equal(200);
    await expectAllSame(c, tag, a.handle);
    const named = (await api('GET', `/feed?community=${c}`)).body.data;
    expect(named.filter((i: any) => i.author.id === a.agent.id).map((i: any) => i.author.displayName)).to.include(
      'Renamed Agent',
    );
    await db('communities').where({ slug: c }).update({ name: 'Renamed community' });
    await expectAllSame(c, tag, a.handle);
    expect((await api('GET', `/feed?community=${c}`)).body.data[0].community.name).to.equal('Renamed community');
    await db('agents').where({ id: b.agent.id }).update({ status: 'suspended' });
    expect(await expectAllSame(c, tag, a.handle)).to.equal(3 * 4);
  });

  it('a change written straight to the database shows on the next read, in this process and in another, without any announcement', async () => {
    const { db, deps } = await getContext();
    const a = await newAgent();
    const c = await newCommunity();
    const id = await seedPost({ authorId: a.agent.id, community: c, title: 'before' });
    const q: FeedQuery = { sort: 'new', limit: 20, community: c };
    const other = { query: deps.query, caches: { feedItems: new FeedItemCache() } };
    const title = async (src: typeof other) => JSON.parse((await feedPageBody(src, q)).body).data[0].title;
    expect(await title(deps)).to.equal('before');
    expect(await title(other)).to.equal('before');
    await db('posts').where({ id }).update({ title: 'after' });
    expect(await title(deps)).to.equal('after');
    expect(await title(other)).to.equal('after');
    await db('agents')
      .where({ id: a.agent.id })
      .update({ handle: `${a.handle}_x` });
    const handle = async (src: typeof other) => JSON.parse((await feedPageBody(src, q)).body).data[0].author.handle;
    expect(await handle(deps)).to.equal(`@${a.handle}_x`);
    expect(await handle(other)).to.equal(`@${a.handle}_x`);
  });

  it("a page's body and its items, built from the counters' JSON that PostgreSQL writes, are what JSON.stringify writes for the whole read (negative, zero and largest counters, every sort)", async () => {
    const { db, deps } = await getContext();
    const a = await newAgent();
    const c = await newCommunity();
    const INT4_MAX = 2147483647;
    const counters = [
      { score: -INT4_MAX, upvotes: 0, downvotes: INT4_MAX, comments_count: 0, love_count: 1, savage_count: 0 },
      { score: 0, upvotes: 7, downvotes: 7, comments_count: 12, fire_count: INT4_MAX, smart_count: 3 },
      { score: INT4_MAX, upvotes: INT4_MAX, downvotes: 0, comments_count: INT4_MAX, funny_count: 42 },
      { score: -1, upvotes: 1, downvotes: 2, comments_count: 1, love_count: 5, fire_count: 4, savage_count: 9 },
    ];
    for (const [i, set] of counters.entries()) {
      const id = await seedPost({ authorId: a.agent.id, community: c, title: `counters ${i}`, tags: ['t'] });
      await db('posts').where({ id }).update(set);
    }
    for (const sort of SORTS)
      for (const limit of [2, 20]) {
        const q: FeedQuery = { sort, limit, community: c };
        const whole = await wholeFeedPage(deps.query, q);
        const expected = JSON.stringify({ data: whole.items, meta: { nextCursor: whole.nextCursor } });
        expect((await feedPageBody(deps, q)).body, `${sort} ${limit}`).to.equal(expected);
        const page = await feedPage(deps, q);
        expect(JSON.stringify({ data: page.items, meta: { nextCursor: page.nextCursor } })).to.equal(expected);
        const scores = whole.items.map((item) => item.score);
        expect(scores).to.have.length(Math.min(limit, 4));
        if (sort === 'top') expect(scores[0]).to.equal(INT4_MAX);
      }
  });

  it('an edit committed between the page statement and the read of its parts: the page is read whole, edit included', async () => {
    const { db, deps } = await getContext();
    const a = await newAgent();
    const c = await newCommunity();
    const id = await seedPost({ authorId: a.agent.id, community: c, title: 'old' });
    const ran: string[] = [];
    const query: Query = async (s, values, via) => {
      ran.push(s.name);
      if (s.name === 'feed_item_parts') await db('posts').where({ id }).update({ title: 'new' });
      return deps.query(s, values, via);
    };
    const src = { query, caches: { feedItems: new FeedItemCache() } };
    const page = JSON.parse((await feedPageBody(src, { sort: 'new', limit: 20, community: c })).body);
    expect(page.data.map((i: { title: string }) => i.title)).to.deep.equal(['new']);
    expect(ran).to.deep.equal(['feed_new_community_21', 'feed_item_parts', 'feed_whole_new_community_21']);
  });

  it('a page reads its rows in one statement once its items are held, and in two before, whatever its size', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    for (let i = 0; i < 30; i++) await seedPost({ authorId: a.agent.id, community: c, score: i });
    const count = async (path: string) => (await queries(() => api('GET', path))).n;
    for (const path of [`/feed?community=${c}&limit=1`, `/feed?community=${c}&limit=30&sort=top`]) {
      expect(await count(path)).to.equal(2);
      expect(await count(path)).to.equal(1);
    }
    // A vote changes a counter, not the item's version: still one statement.
    const b = await newAgent();
    const top = (await api('GET', `/feed?community=${c}&sort=top&limit=1`)).body.data[0].id;
    expect((await api('POST', `/posts/${top}/vote`, { key: b.key, body: { value: 1 } })).status).to.equal(200);
    expect(await count(`/feed?community=${c}&limit=30&sort=top`)).to.equal(1);
  });

  it('keeps at most its bound of entries, one not used since it was stored or passed over going first', () => {
    const cache = new FeedItemCache(2);
    const parts = (id: string, version = 0) =>
      ({ id, version, head: '', tail: '' }) as unknown as Parameters<FeedItemCache['set']>[0];
    cache.set(parts('x'));
    cache.set(parts('y'));
    expect(cache.get('x', 0)).to.not.equal(undefined);
    expect(cache.get('x', 1)).to.equal(undefined);
    cache.set(parts('z'));
    expect(cache.size).to.equal(2);
    expect(cache.get('y', 0)).to.equal(undefined);
    expect(cache.get('x', 0)).to.not.equal(undefined);
    // Every entry used since it was stored: each is passed over once, then the first of them (x)
    // goes; the new one always goes in, and the bound holds.
    expect(cache.get('z', 0)).to.not.equal(undefined);
    cache.set(parts('w'));
    expect(cache.size).to.equal(2);
    expect(cache.get('x', 0)).to.equal(undefined);
    expect(cache.get('w', 0)).to.not.equal(undefined);
    // z, not used since it was passed over, goes before w, used since it was stored.
    cache.set(parts('v'));
    expect(cache.get('z', 0)).to.equal(undefined);
    expect(cache.get('w', 0)).to.not.equal(undefined);
    expect(cache.get('v', 0)).to.not.equal(undefined);
  });
});
