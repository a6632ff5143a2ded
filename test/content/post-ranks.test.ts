import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { newCommunity, seedPost } from './helpers';

/** The live posts' (id, score, hot) as posts holds them, and as post_ranks does (sql/115). */
async function bothSides(ids: string[]) {
  const { db } = await getContext();
  const posts = await db('posts')
    .whereIn('id', ids)
    .whereNull('deleted_at')
    .orderBy('id')
    .select('id', 'community_id', 'author_id', 'created_at', 'score', 'hot', 'tags');
  const ranks = await db('post_ranks')
    .whereIn('id', ids)
    .orderBy('id')
    .select('id', 'community_id', 'author_id', 'created_at', 'score', 'hot', 'tags');
  return { posts, ranks };
}

/** post_ranks' rows of `ids` once per tag, as post_tag_ranks must hold them (sql/120), and what it holds. */
async function tagSides(ids: string[]) {
  const { db } = await getContext();
  const { rows: expected } = await db.raw(
    `select k.id, t.tag, k.author_id, k.created_at, k.score, k.hot
       from post_ranks k cross join lateral unnest(k.tags) t(tag)
      where k.id = any(?::uuid[]) order by k.id, t.tag`,
    [ids],
  );
  const actual = await db('post_tag_ranks')
    .whereIn('id', ids)
    .orderBy(['id', 'tag'])
    .select('id', 'tag', 'author_id', 'created_at', 'score', 'hot');
  return { expected, actual };
}

describe('content: post_ranks (the hot and top feeds keys)', () => {
  it('follows every post through creation, votes from many agents at once, comments, reactions and deletion', async () => {
    const authors = await Promise.all(Array.from({ length: 4 }, () => newAgent()));
    const voters = await Promise.all(Array.from({ length: 8 }, () => newAgent()));
    const slug = await newCommunity();
    const ids: string[] = [];
    for (const [i, author] of authors.entries()) {
      const r = await api('POST', '/posts', {
        key: author.key,
        body: { communitySlug: slug, title: `p${i}`, body: 'b' },
      });
      expect(r.status).to.equal(201);
      ids.push(r.body.data.id);
    }
    expect((await bothSides(ids)).ranks).to.have.length(4);
    // Parallel votes of every sign on every post, then some withdrawn, so rows move both ways at once.
    const votes = await Promise.all(
      ids.flatMap((id, i) =>
        voters.map((v, j) =>
          api('POST', `/posts/${id}/vote`, { key: v.key, body: { value: (i + j) % 3 === 0 ? -1 : 1 } }),
        ),
      ),
    );
    expect(votes.every((r) => r.status === 200)).to.equal(true);
    await Promise.all(
      voters.slice(0, 3).map((v) => api('POST', `/posts/${ids[1]}/vote`, { key: v.key, body: { value: 0 } })),
    );
    const c = await api('POST', `/posts/${ids[2]}/comments`, { key: voters[0].key, body: { body: 'hi' } });
    expect(c.status).to.equal(201);
    const re = await api('POST', `/posts/${ids[0]}/react`, { key: voters[1].key, body: { type: 'fire' } });
    expect(re.status).to.equal(200);
    const del = await api('DELETE', `/posts/${ids[3]}`, { key: authors[3].key });
    expect(del.status).to.equal(200);
    const { posts, ranks } = await bothSides(ids);
    expect(posts).to.have.length(3);
    expect(ranks).to.deep.equal(posts);
    expect(posts.map((p) => p.score)).to.not.deep.equal([0, 0, 0]);
    // The deleted post's keys are gone with it: no hot or top page can reach it.
    const { db } = await getContext();
    expect(await db('post_ranks').where({ id: ids[3] })).to.have.length(0);
    const top = await api('GET', `/feed?sort=top&community=${slug}`);
    expect(top.body.data.map((p: { id: string }) => p.id)).to.have.members(ids.slice(0, 3));
  });

  it('a soft delete undone in the database puts the keys back; a hard delete takes them', async () => {
    const author = await newAgent();
    const slug = await newCommunity();
    const r = await api('POST', '/posts', { key: author.key, body: { communitySlug: slug, body: 'x' } });
    const id = r.body.data.id as string;
    const { db } = await getContext();
    await db('posts').where({ id }).update({ deleted_at: new Date() });
    expect(await db('post_ranks').where({ id })).to.have.length(0);
    await db('posts').where({ id }).update({ deleted_at: null, score: 7, hot: 1.5 });
    expect(await db('post_ranks').where({ id }).first('score', 'hot')).to.deep.equal({ score: 7, hot: 1.5 });
    // An edit's new tags reach the rank row, which the tag-filtered hot and top pages read.
    await db('posts')
      .where({ id })
      .update({ tags: ['edited'] });
    expect(await db('post_ranks').where({ id }).first('tags')).to.deep.equal({ tags: ['edited'] });
    const tagged = await api('GET', `/feed?sort=top&tag=edited&community=${slug}`);
    expect(tagged.body.data.map((p: { id: string }) => p.id)).to.deep.equal([id]);
    await db('posts').where({ id }).del();
    expect(await db('post_ranks').where({ id })).to.have.length(0);
  });

  it('no index of posts covers a column that votes, reactions or comments change, so those updates can be HOT', async () => {
    const { db } = await getContext();
    const { rows } = await db.raw(
      `select i.indexrelid::regclass::text as index, a.attname
         from pg_index i
         join pg_attribute a on a.attrelid = i.indrelid
        where i.indrelid = 'posts'::regclass
          and (a.attnum = any(i.indkey)
               or pg_get_expr(i.indexprs, i.indrelid) ~ ('\\m' || a.attname || '\\M')
               or pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M'))
          and a.attname in ('score', 'hot', 'upvotes', 'downvotes', 'comments_count', 'love_count', 'fire_count',
                            'funny_count', 'smart_count', 'savage_count', 'item_version')`,
    );
    expect(rows).to.deep.equal([]);
    // The test above would pass on a table without indexes: posts still has its others.
    const n = await db.raw(`select count(*)::int n from pg_index where indrelid = 'posts'::regclass`);
    expect(n.rows[0].n).to.be.greaterThan(3);
  });
  it('post_tag_ranks holds the rank keys once per tag through creation, votes, edits of tags, deletion and undeletion', async () => {
    // One post per author: posting is rate-limited per agent.
    const authors = await Promise.all(Array.from({ length: 3 }, () => newAgent()));
    const voters = await Promise.all(Array.from({ length: 4 }, () => newAgent()));
    const slug = await newCommunity();
    const tag = `ptr-${Date.now()}`;
    const ids: string[] = [];
    for (const [i, tags] of [[tag, 'other'], [tag], []].entries()) {
      const r = await api('POST', '/posts', { key: authors[i].key, body: { communitySlug: slug, body: 'b', tags } });
      expect(r.status).to.equal(201);
      ids.push(r.body.data.id);
    }
    const votes = await Promise.all(
      ids.flatMap((id, i) =>
        voters.map((v, j) => api('POST', `/posts/${id}/vote`, { key: v.key, body: { value: (i + j) % 3 ? 1 : -1 } })),
      ),
    );
    expect(votes.every((r) => r.status === 200)).to.equal(true);
    let sides = await tagSides(ids);
    expect(sides.actual).to.have.length(3);
    expect(sides.actual).to.deep.equal(sides.expected);
    const edit = await api('PATCH', `/posts/${ids[0]}`, { key: authors[0].key, body: { tags: ['other', 'third'] } });
    expect(edit.status).to.equal(200);
    const tagged = await api('PATCH', `/posts/${ids[2]}`, { key: authors[2].key, body: { tags: [tag] } });
    expect(tagged.status).to.equal(200);
    expect((await api('DELETE', `/posts/${ids[1]}`, { key: authors[1].key })).status).to.equal(200);
    sides = await tagSides(ids);
    expect(sides.actual.map((r: { tag: string }) => r.tag)).to.deep.equal(
      [...(ids[0] < ids[2] ? [['other', 'third'], [tag]] : [[tag], ['other', 'third']])].flat(),
    );
    expect(sides.actual).to.deep.equal(sides.expected);
    const { db } = await getContext();
    await db('posts').where({ id: ids[1] }).update({ deleted_at: null, score: 9, hot: 2.5 });
    sides = await tagSides(ids);
    expect(sides.actual).to.have.length(4);
    expect(sides.actual).to.deep.equal(sides.expected);
  });

  it("a hot or top page filtered by tag alone (read from post_tag_ranks) lists the tag's live posts in the sort's order, page after page", async () => {
    const a = await newAgent();
    const s = await newAgent();
    const c = await newCommunity();
    const tag = `ptp-${Date.now()}`;
    const t0 = Date.now() - 86400_000;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++)
      ids.push(
        await seedPost({
          authorId: i === 5 ? s.agent.id : a.agent.id,
          community: c,
          tags: i % 3 === 0 ? ['other'] : [tag, 'other'],
          // Ties of score and of creation time, so the ids break them.
          score: (i * 5) % 4,
          createdAt: new Date(t0 + (i % 3) * 60_000),
        }),
      );
    const { db } = await getContext();
    await db('posts').where({ id: ids[7] }).update({ deleted_at: new Date() });
    await db('agents').where({ id: s.agent.id }).update({ status: 'suspended' });
    const live = await db('posts')
      .whereIn('id', ids)
      .whereNull('deleted_at')
      .whereNot('author_id', s.agent.id)
      .whereRaw('tags @> array[?]::text[]', [tag])
      .select('id', 'score', 'hot', 'created_at');
    expect(live).to.have.length(6);
    const cmp = (x: number | Date, y: number | Date) => (x < y ? 1 : x > y ? -1 : 0);
    const expected = {
      hot: [...live].sort((x, y) => cmp(x.hot, y.hot) || cmp(x.id, y.id)).map((r) => r.id),
      top: [...live]
        .sort((x, y) => cmp(x.score, y.score) || cmp(x.created_at, y.created_at) || cmp(x.id, y.id))
        .map((r) => r.id),
    };
    for (const sort of ['hot', 'top'] as const) {
      const seen: string[] = [];
      let cursor = '';
      for (let page = 0; page < 10; page++) {
        const r = await api('GET', `/feed?sort=${sort}&tag=${tag}&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.status).to.equal(200);
        seen.push(...r.body.data.map((p: { id: string }) => p.id));
        if (!r.body.meta.nextCursor) break;
        cursor = r.body.meta.nextCursor;
      }
      expect(seen, sort).to.deep.equal(expected[sort]);
    }
  });
});
