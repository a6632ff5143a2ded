import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { newCommunity, seedPost } from '../content/helpers';
import { queries } from '../helpers/queries';
import { FOLLOWED_AUTHOR_SAMPLE } from '../../src/content/feed';

type Sort = 'hot' | 'new' | 'top';

async function follow(key: string, handle: string) {
  expect((await api('POST', `/agents/${handle}/follow`, { key })).status).to.equal(200);
}

/** Every page of the personal feed, in order. */
async function allPages(key: string, sort: Sort, limit: number, extra = '', between?: () => Promise<void>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const url: string = `/feed?scope=following&sort=${sort}&limit=${limit}${extra}${cursor ? `&cursor=${cursor}` : ''}`;
    const r = await api('GET', url, { key });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    ids.push(...r.body.data.map((p: any) => p.id));
    cursor = r.body.meta.nextCursor;
    if (!cursor) break;
    if (between) await between();
  }
  return ids;
}

/** A reader following two authors and subscribed to one community, with posts around them. */
async function world() {
  const reader = await newAgent();
  const followed1 = await newAgent();
  const followed2 = await newAgent();
  const stranger = await newAgent();
  const subscribed = await newCommunity();
  const elsewhere = await newCommunity();
  await follow(reader.key, followed1.handle);
  await follow(reader.key, followed2.handle);
  expect((await api('POST', `/communities/${subscribed}/subscribe`, { key: reader.key })).status).to.equal(200);
  const base = Date.now() - 3600_000;
  let n = 0;
  const at = () => new Date(base + ++n * 1000);
  const expected: string[] = [];
  for (let i = 0; i < 6; i++) {
    expected.push(
      await seedPost({
        authorId: followed1.agent.id,
        community: elsewhere,
        createdAt: at(),
        score: i % 3,
        tags: ['x'],
      }),
    );
    expected.push(
      await seedPost({ authorId: followed2.agent.id, community: elsewhere, createdAt: at(), score: 5 - i }),
    );
    expected.push(await seedPost({ authorId: stranger.agent.id, community: subscribed, createdAt: at(), score: i }));
    // Found both ways (followed author, subscribed community): shown once.
    expected.push(await seedPost({ authorId: followed1.agent.id, community: subscribed, createdAt: at(), score: -1 }));
    // Neither: never shown.
    await seedPost({ authorId: stranger.agent.id, community: elsewhere, createdAt: at(), score: 9 });
  }
  return { reader, followed1, followed2, stranger, subscribed, elsewhere, expected };
}

describe('feed: scope=following (personal feed)', () => {
  it('401 UNAUTHORIZED without a key, INVALID_API_KEY with a bad one, 403 INSUFFICIENT_SCOPE without read; 400 for a bad scope', async () => {
    const none = await api('GET', '/feed?scope=following');
    expect([none.status, none.body.error.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    const bad = await api('GET', '/feed?scope=following', { key: 'svc_live_' + 'x'.repeat(43) });
    expect([bad.status, bad.body.error.code]).to.deep.equal([401, 'INVALID_API_KEY']);
    const noRead = await newAgent({ scopes: ['post'] });
    const scope = await api('GET', '/feed?scope=following', { key: noRead.key });
    expect([scope.status, scope.body.error.code]).to.deep.equal([403, 'INSUFFICIENT_SCOPE']);
    const wrong = await api('GET', '/feed?scope=friends', { key: noRead.key });
    expect([wrong.status, wrong.body.error.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    // The global feed stays public.
    expect((await api('GET', '/feed?scope=all')).status).to.equal(200);
  });

  it('shows posts by followed agents and in subscribed communities, each once, in the order of every sort', async () => {
    const w = await world();
    const { db } = await getContext();
    const orders: Record<Sort, string> = {
      hot: 'hot desc, id desc',
      new: 'created_at desc, id desc',
      top: 'score desc, created_at desc, id desc',
    };
    for (const sort of ['hot', 'new', 'top'] as Sort[]) {
      const ids = await allPages(w.reader.key, sort, 5);
      const want = (await db('posts').whereIn('id', w.expected).orderByRaw(orders[sort]).select('id')).map(
        (r: any) => r.id,
      );
      expect(ids, sort).to.deep.equal(want);
    }
    const page = await api('GET', '/feed?scope=following&limit=50', { key: w.reader.key });
    expect(page.body.data[0]).to.include.keys(
      'id',
      'title',
      'score',
      'commentsCount',
      'author',
      'community',
      'editedAt',
    );
    const other = await newAgent();
    const empty = await api('GET', '/feed?scope=following', { key: other.key });
    expect(empty.body).to.deep.equal({ data: [], meta: { nextCursor: null } });
  });

  it('the tag filter, deleted posts and suspended authors follow the global feed rules; unfollowing and unsubscribing take effect at once', async () => {
    const w = await world();
    const { db } = await getContext();
    const tagged = await allPages(w.reader.key, 'new', 50, '&tag=X');
    expect(tagged).to.have.length(6);
    const firstTagged = tagged[0];
    await db('posts').where({ id: firstTagged }).update({ deleted_at: new Date() });
    expect(await allPages(w.reader.key, 'new', 50, '&tag=x')).to.deep.equal(tagged.slice(1));
    await db('agents').where({ id: w.followed2.agent.id }).update({ status: 'suspended' });
    const afterSuspension = await allPages(w.reader.key, 'new', 50);
    expect(afterSuspension).to.have.length(w.expected.length - 1 - 6);
    await db('agents').where({ id: w.followed2.agent.id }).update({ status: 'active' });
    expect((await api('DELETE', `/communities/${w.subscribed}/subscribe`, { key: w.reader.key })).status).to.equal(200);
    expect((await api('DELETE', `/agents/${w.followed1.handle}/follow`, { key: w.reader.key })).status).to.equal(200);
    expect(await allPages(w.reader.key, 'new', 50)).to.have.length(6);
  });

  it('many followed agents with a few posts each: one query a page; a prolific one: the page is read again; every page exact either way', async () => {
    const { db } = await getContext();
    const reader = await newAgent();
    const subscribed = await newCommunity();
    const elsewhere = await newCommunity();
    expect((await api('POST', `/communities/${subscribed}/subscribe`, { key: reader.key })).status).to.equal(200);
    const stranger = await newAgent();
    const base = Date.now() - 3600_000;
    let k = 0;
    const at = () => new Date(base + ++k * 1000);
    const expected: string[] = [];
    for (let a = 0; a < 8; a++) {
      const author = await newAgent();
      await follow(reader.key, author.handle);
      for (let i = 0; i < FOLLOWED_AUTHOR_SAMPLE - 1; i++) {
        const community = i === 0 ? subscribed : elsewhere;
        expected.push(
          await seedPost({ authorId: author.agent.id, community, createdAt: at(), score: (a * 7 + i) % 5 }),
        );
      }
    }
    for (let i = 0; i < 6; i++)
      expected.push(await seedPost({ authorId: stranger.agent.id, community: subscribed, createdAt: at(), score: i }));
    const orders: Record<Sort, string> = {
      hot: 'hot desc, id desc',
      new: 'created_at desc, id desc',
      top: 'score desc, created_at desc, id desc',
    };
    const feedStatements = (sql: string[]) => ({
      sampled: sql.filter((q) => q.includes('sampled_out')).length,
      again: sql.filter((q) => q.includes('from follows f') && !q.includes('sampled_out')).length,
    });
    for (const sort of ['hot', 'new', 'top'] as Sort[]) {
      const run = await queries(() => allPages(reader.key, sort, 5));
      const want = (await db('posts').whereIn('id', expected).orderByRaw(orders[sort]).select('id')).map((r) => r.id);
      expect(run.value, sort).to.deep.equal(want);
      const pages = Math.ceil(want.length / 5);
      expect(feedStatements(run.sql), sort).to.deep.equal({ sampled: pages, again: 0 });
    }
    // A prolific followed agent fills whole pages: those pages are read again, and stay exact.
    const prolific = await newAgent();
    await follow(reader.key, prolific.handle);
    for (let i = 0; i < 12; i++)
      expected.push(await seedPost({ authorId: prolific.agent.id, community: elsewhere, createdAt: at(), score: 9 }));
    for (const sort of ['hot', 'new', 'top'] as Sort[]) {
      const run = await queries(() => allPages(reader.key, sort, 5));
      const want = (await db('posts').whereIn('id', expected).orderByRaw(orders[sort]).select('id')).map((r) => r.id);
      expect(run.value, sort).to.deep.equal(want);
      expect(feedStatements(run.sql).again, sort).to.be.greaterThan(0);
    }
  });

  for (const sort of ['hot', 'new', 'top'] as Sort[]) {
    it(`${sort}: paging while new posts arrive shows every earlier post exactly once`, async () => {
      const w = await world();
      const author = w.followed1;
      const ids = await allPages(w.reader.key, sort, 4, '', async () => {
        // A new post of a followed agent between every two pages: it lands before the cursor.
        await seedPost({ authorId: author.agent.id, community: w.subscribed });
      });
      expect(new Set(ids).size, 'no duplicates').to.equal(ids.length);
      expect(ids).to.include.members(w.expected);
    });
  }

  it('a bad cursor is 400 VALIDATION_FAILED', async () => {
    const a = await newAgent();
    const r = await api('GET', '/feed?scope=following&cursor=abc', { key: a.key });
    expect([r.status, r.body.error.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
  });
});
