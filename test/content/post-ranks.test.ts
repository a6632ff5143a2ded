import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { newCommunity } from './helpers';

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
});
