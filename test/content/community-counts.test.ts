import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, TestAgent } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from './helpers';
import { setAgentStatus } from '../../src/identity/cli';
import { countedFromRows } from '../../bench/lib/community-counts';
import * as migration from '../../sql/114_community_counts';

const DAY = 86_400_000;

describe('content: community counts kept per agent', () => {
  /** GET /communities/{slug} and its row in GET /communities both equal the counts over the rows. */
  async function same(slug: string, expected?: { postCount: number; activeAgentCount: number }) {
    const { db, deps } = await getContext();
    const [{ slug: _slug, ...want }] = await countedFromRows(db, deps.now(), slug);
    if (expected) expect(want, 'the scenario').to.deep.equal(expected);
    const one = await api('GET', `/communities/${slug}`);
    expect(one.status).to.equal(200);
    expect(one.body.data).to.deep.include(want);
    const all = await api('GET', '/communities');
    expect(all.body.data.find((c: { slug: string }) => c.slug === slug)).to.deep.equal(one.body.data);
  }

  const post = async (a: TestAgent, slug: string) => {
    const r = await api('POST', '/posts', { key: a.key, body: { communitySlug: slug, body: 'counted' } });
    expect(r.status, r.text).to.equal(201);
    return r.body.data.id as string;
  };
  const comment = async (a: TestAgent, postId: string) => {
    const r = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'counted too' } });
    expect(r.status, r.text).to.equal(201);
    return r.body.data.id as string;
  };

  it('stay exact through creates, deletions, removals, old contributions, suspensions and a moved or backdated post', async () => {
    const { db, deps } = await getContext();
    const slug = await newCommunity();
    const other = await newCommunity();
    const [a, b, c, d, e] = await Promise.all(Array.from({ length: 5 }, () => newAgent()));
    await same(slug, { postCount: 0, activeAgentCount: 0 });

    const p1 = await post(a, slug);
    const p2 = await post(e, slug);
    const c1 = await comment(b, p1);
    await seedComment(p2, b.agent.id);
    await seedPost({ authorId: c.agent.id, community: slug, createdAt: new Date(Date.now() - 40 * DAY) });
    await same(slug, { postCount: 3, activeAgentCount: 3 });
    // An old comment only: c stays inactive.
    const old = await seedComment(p1, c.agent.id);
    await db('comments')
      .where({ id: old })
      .update({ created_at: new Date(Date.now() - 31 * DAY) });
    await same(slug, { postCount: 3, activeAgentCount: 3 });

    // A deleted post takes its author and the comments on it out; b's comment elsewhere still counts, then goes.
    expect((await api('DELETE', `/posts/${p2}`, { key: e.key })).status).to.equal(200);
    await same(slug, { postCount: 2, activeAgentCount: 2 });
    expect((await api('DELETE', `/comments/${c1}`, { key: b.key })).status).to.equal(200);
    await same(slug, { postCount: 2, activeAgentCount: 1 });

    // A moderation removal sets deleted_at like a deletion.
    const p3 = await post(d, slug);
    await same(slug, { postCount: 3, activeAgentCount: 2 });
    await db('posts').where({ id: p3 }).update({ removed_at: new Date(), deleted_at: new Date() });
    await same(slug, { postCount: 2, activeAgentCount: 1 });

    // A suspended author's posts and activity leave; they come back with it.
    await setAgentStatus(deps, a.handle, 'suspended');
    await same(slug, { postCount: 1, activeAgentCount: 0 });
    await setAgentStatus(deps, a.handle, 'active');
    await same(slug, { postCount: 2, activeAgentCount: 1 });

    // A post backdated, then moved to another community (rows changed outside the API).
    await db('posts')
      .where({ id: p1 })
      .update({ created_at: new Date(Date.now() - 35 * DAY) });
    await same(slug, { postCount: 2, activeAgentCount: 0 });
    await db('posts')
      .where({ id: p1 })
      .update({ community_id: db('communities').where({ slug: other }).select('id') });
    await same(slug, { postCount: 1, activeAgentCount: 0 });
    await same(other, { postCount: 1, activeAgentCount: 0 });

    // The service clock moving on ages everything out of the window; the post count stays.
    const p4 = await post(b, slug);
    await same(slug, { postCount: 2, activeAgentCount: 1 });
    const ctx = await getContext();
    ctx.setNow(new Date(Date.now() + 31 * DAY));
    try {
      await same(slug, { postCount: 2, activeAgentCount: 0 });
    } finally {
      ctx.setNow(null);
    }
    expect((await api('DELETE', `/posts/${p4}`, { key: b.key })).status).to.equal(200);
    await same(slug, { postCount: 1, activeAgentCount: 0 });
  });

  it('stay exact under concurrent creates, and comments racing the deletion of their post', async () => {
    const slug = await newCommunity();
    const agents = await Promise.all(Array.from({ length: 12 }, () => newAgent()));
    const commenters = await Promise.all(Array.from({ length: 8 }, () => newAgent()));
    const author = await newAgent();
    const target = await post(author, slug);
    // Every agent posts at once, while others comment on a post its author deletes meanwhile:
    // those comments never count (the commenters do nothing else here).
    const settled = await Promise.allSettled([
      ...agents.map((x) => post(x, slug)),
      ...commenters.map((x) => comment(x, target)),
      api('DELETE', `/posts/${target}`, { key: author.key }),
    ]);
    // A comment that lost the race to the deletion is refused (404); nothing else may fail.
    for (const f of settled.filter((s) => s.status === 'rejected'))
      expect(String((f as PromiseRejectedResult).reason)).to.match(/404/);
    await same(slug, { postCount: 12, activeAgentCount: 12 });
    // Many posts by one agent at once (seeded: no rate limit): one activity row, counted once each.
    await Promise.all(Array.from({ length: 20 }, () => seedPost({ authorId: agents[1].agent.id, community: slug })));
    await same(slug, { postCount: 32, activeAgentCount: 12 });
    // One author's deletions racing its own new posts and comments (seeded: no rate limit).
    const a = agents[2];
    const mine = await Promise.all(
      Array.from({ length: 6 }, () => seedPost({ authorId: a.agent.id, community: slug })),
    );
    const notes = await Promise.all(mine.map((p) => seedComment(p, a.agent.id)));
    await Promise.all([
      ...mine
        .slice(0, 3)
        .map(async (p) => expect((await api('DELETE', `/posts/${p}`, { key: a.key })).status).to.equal(200)),
      ...notes
        .slice(3)
        .map(async (c) => expect((await api('DELETE', `/comments/${c}`, { key: a.key })).status).to.equal(200)),
      ...Array.from({ length: 6 }, () => seedPost({ authorId: a.agent.id, community: slug })),
      ...mine.slice(3).map((p) => seedComment(p, a.agent.id)),
    ]);
    await same(slug, { postCount: 41, activeAgentCount: 12 });
    // Every community of the database, whatever the tests before wrote.
    const { db, deps } = await getContext();
    const listed = (await api('GET', '/communities')).body.data.map(
      ({ slug: s, postCount, activeAgentCount }: Record<string, unknown>) => ({ slug: s, postCount, activeAgentCount }),
    );
    expect(listed).to.deep.equal(await countedFromRows(db, deps.now()));
  });

  it('the migration backfills the counters of the posts and comments written before it', async () => {
    const { db } = await getContext();
    const slug = await newCommunity();
    const [a, b] = [await newAgent(), await newAgent()];
    const p = await post(a, slug);
    await comment(b, p);
    await seedPost({ authorId: b.agent.id, community: slug, createdAt: new Date(Date.now() - 45 * DAY) });
    await migration.down(db);
    await migration.up(db);
    await same(slug, { postCount: 2, activeAgentCount: 2 });
    const after = await post(b, slug);
    expect((await api('DELETE', `/posts/${after}`, { key: b.key })).status).to.equal(200);
    await same(slug, { postCount: 2, activeAgentCount: 2 });
  });
});
