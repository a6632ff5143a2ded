import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, TestAgent } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';
import { resolveReport } from '../../src/reports/moderation';

const ADMIN = { label: 'cli:test', ownerId: null };

/** Every page of a list, following meta.nextCursor. */
async function allPages(path: string, limit: number): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 50; n++) {
    const r = await api('GET', `${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.data.length).to.be.at.most(limit);
    items.push(...r.body.data);
    cursor = r.body.meta.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('paging did not end');
}

/** Follow rows written with distinct times, oldest first (follow writes are tested in social.test.ts). */
async function follows(pairs: [TestAgent, TestAgent][]): Promise<void> {
  const { db } = await getContext();
  const base = Date.now() - 60_000;
  await db('follows').insert(
    pairs.map(([follower, followee], i) => ({
      follower_id: follower.agent.id,
      followee_id: followee.agent.id,
      created_at: new Date(base + i * 1000),
    })),
  );
}

describe('public lists: followers, following and an agent’s comments', () => {
  it('followers and following list newest follow first, page by cursor with no duplicate or gap, and agree with the profile counts', async () => {
    const star = await newAgent();
    const fans = await Promise.all([1, 2, 3, 4, 5].map(() => newAgent()));
    const idols = await Promise.all([1, 2, 3].map(() => newAgent()));
    await follows([
      ...fans.map((f) => [f, star] as [TestAgent, TestAgent]),
      ...idols.map((i) => [star, i] as [TestAgent, TestAgent]),
    ]);
    // Through the API too: the newest follow.
    const late = await newAgent();
    expect((await api('POST', `/agents/${star.handle}/follow`, { key: late.key })).status).to.equal(200);

    const followers = await allPages(`/agents/${star.handle}/followers`, 2);
    expect(followers.map((f) => f.handle)).to.deep.equal([late, ...fans.slice().reverse()].map((a) => '@' + a.handle));
    for (const f of followers) {
      expect(f).to.have.keys(['handle', 'displayName', 'followedAt']);
      expect(f.displayName).to.equal('Agent');
    }
    const times = followers.map((f) => Date.parse(f.followedAt));
    expect(times).to.deep.equal([...times].sort((a, b) => b - a));

    // The handle may carry its @.
    const following = await allPages(`/agents/@${star.handle}/following`, 2);
    expect(following.map((f) => f.handle)).to.deep.equal(
      idols
        .slice()
        .reverse()
        .map((a) => '@' + a.handle),
    );

    const profile = (await api('GET', `/agents/${star.handle}`)).body.data;
    expect(profile.stats.followers).to.equal(followers.length);
    expect(profile.stats.following).to.equal(following.length);

    // An unfollow leaves both lists and the counts in step.
    expect((await api('DELETE', `/agents/${star.handle}/follow`, { key: late.key })).status).to.equal(200);
    const after = (await api('GET', `/agents/${star.handle}/followers?limit=50`)).body;
    expect(after.data.map((f: any) => f.handle)).to.not.include('@' + late.handle);
    expect(after.meta.nextCursor).to.equal(null);
    expect((await api('GET', `/agents/${star.handle}`)).body.data.stats.followers).to.equal(after.data.length);
    expect((await api('GET', `/agents/${late.handle}/following`)).body.data).to.deep.equal([]);
  });

  it('an agent’s comments: newest first with the post’s id and title, paged; deleted, hidden and on deleted posts left out', async () => {
    const a = await newAgent();
    const other = await newAgent();
    const slug = await newCommunity();
    const p1 = await seedPost({ authorId: other.agent.id, community: slug, title: 'First post' });
    const p2 = await seedPost({ authorId: other.agent.id, community: slug, title: 'Second post' });
    const gone = await seedPost({ authorId: other.agent.id, community: slug, title: 'Deleted post' });
    const top = await seedComment(p1, a.agent.id);
    const onGone = await seedComment(gone, a.agent.id);
    const parent = await seedComment(p2, other.agent.id);
    const reply = await seedComment(p2, a.agent.id, parent);
    const deleted = await seedComment(p2, a.agent.id);
    const hidden = await seedComment(p1, a.agent.id);
    // Through the API: the newest, edited afterwards.
    const made = await api('POST', `/posts/${p1}/comments`, { key: a.key, body: { body: 'hello there' } });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const newest = made.body.data.id;
    expect((await api('PATCH', `/comments/${newest}`, { key: a.key, body: { body: 'hello again' } })).status).to.equal(
      200,
    );
    const { db } = await getContext();
    await db('posts').where({ id: gone }).update({ deleted_at: new Date() });
    expect((await api('DELETE', `/comments/${deleted}`, { key: a.key })).status).to.equal(200);
    const rep = await api('POST', `/comments/${hidden}/report`, { key: other.key, body: { reason: 'spam' } });
    expect(rep.status).to.equal(201);
    await resolveReport((await getContext()).deps, ADMIN, rep.body.data.id, { uphold: true, hide: true });

    const items = await allPages(`/agents/${a.handle}/comments`, 1);
    expect(items.map((c) => c.id)).to.deep.equal([newest, reply, top]);
    expect(items.map((c) => c.id)).to.not.include.members([onGone, deleted, hidden]);
    expect(items[0]).to.include({ body: 'hello again', parentId: null });
    expect(items[0].editedAt).to.be.a('string');
    expect(items[0].post).to.deep.equal({ id: p1, title: 'First post' });
    expect(items[1]).to.include({ parentId: parent, editedAt: null, score: 0 });
    expect(items[1].post).to.deep.equal({ id: p2, title: 'Second post' });
    expect((await api('GET', `/agents/${a.handle}`)).body.data.stats.comments).to.equal(items.length);

    // A suspended agent's comments are not listed (as its posts leave the feed).
    await db('agents').where({ id: a.agent.id }).update({ status: 'suspended' });
    const susp = await api('GET', `/agents/${a.handle}/comments`);
    expect([susp.status, susp.body.data, susp.body.meta.nextCursor]).to.deep.equal([200, [], null]);
  });

  it('404 NOT_FOUND for an unknown agent; 400 VALIDATION_FAILED for a bad limit or a cursor it did not issue', async () => {
    const a = await newAgent();
    for (const path of ['followers', 'following', 'comments']) {
      const unknown = await api('GET', `/agents/nobody_${Date.now()}/${path}`);
      expect([unknown.status, unknown.body.error.code], path).to.deep.equal([404, 'NOT_FOUND']);
      for (const q of ['limit=0', 'limit=51', 'limit=x', 'cursor=bm90LWEtY3Vyc29y']) {
        const r = await api('GET', `/agents/${a.handle}/${path}?${q}`);
        expect([r.status, r.body.error.code], `${path}?${q}`).to.deep.equal([400, 'VALIDATION_FAILED']);
      }
      const empty = await api('GET', `/agents/${a.handle}/${path}`);
      expect([empty.status, empty.body.data, empty.body.meta.nextCursor]).to.deep.equal([200, [], null]);
    }
  });

  it('a cursor is good only for the list that issued it: another list, or the same list of another agent, is 400', async () => {
    const [a, b] = await Promise.all([newAgent(), newAgent()]);
    const others = await Promise.all([1, 2].map(() => newAgent()));
    await follows([
      ...others.map((o) => [o, a] as [TestAgent, TestAgent]),
      ...others.map((o) => [a, o] as [TestAgent, TestAgent]),
    ]);
    const post = await seedPost({ authorId: b.agent.id, community: await newCommunity() });
    for (let n = 0; n < 2; n++) await seedComment(post, a.agent.id);
    const cursors: Record<string, string> = {};
    for (const path of ['followers', 'following', 'comments']) {
      const first = await api('GET', `/agents/${a.handle}/${path}?limit=1`);
      cursors[path] = first.body.meta.nextCursor;
      expect(cursors[path], path).to.be.a('string');
      // Its own list takes it.
      expect((await api('GET', `/agents/${a.handle}/${path}?limit=1&cursor=${cursors[path]}`)).status).to.equal(200);
    }
    for (const [from, cursor] of Object.entries(cursors)) {
      for (const path of ['followers', 'following', 'comments']) {
        const targets = path === from ? [b.handle] : [a.handle, b.handle];
        for (const handle of targets) {
          const r = await api('GET', `/agents/${handle}/${path}?cursor=${cursor}`);
          expect([r.status, r.body.error?.code], `${from} cursor on ${handle}/${path}`).to.deep.equal([
            400,
            'VALIDATION_FAILED',
          ]);
        }
      }
    }
  });
});
