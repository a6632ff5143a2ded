import { expect } from 'chai';
import type { Knex } from 'knex';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { newCommunity } from '../content/helpers';
import { createDb } from '../../src/db/knex';
import { createQuery, declaredStatements, statement } from '../../src/db/query';
import type { Deps } from '../../src/deps';
import { createPost, getPost } from '../../src/content/posts';
import { createComment, listComments } from '../../src/content/comments';
import { agentProfile } from '../../src/agents/profile';
import { castVote } from '../../src/votes/service';
import { runFull } from '../../src/scoring/service';
import { setFollow } from '../../src/follows/service';
import { getReputationBody } from '../../src/reputation/service';
import { feedPage } from '../../src/content/feed';

/**
 * The hot statements run as named prepared statements (src/db/query.ts). The deps here hold a
 * pool of ONE connection, so pg_prepared_statements of that connection shows every statement
 * they prepared, and a write that ran a statement beside its transaction instead of in it would
 * wait for the pool forever (an acquire timeout, a failed test).
 */
describe('named statements (deps.query)', () => {
  let db1: Knex;
  let deps1: Deps;

  before(async () => {
    const ctx = await getContext();
    db1 = createDb(ctx.databaseUrl, 1);
    deps1 = { ...ctx.deps, db: db1, query: createQuery(db1) };
  });
  after(async () => {
    await db1.destroy();
  });

  async function prepared(): Promise<{ name: string; statement: string }[]> {
    return (await db1.raw('select name, statement from pg_prepared_statements order by name')).rows;
  }
  const named = async (name: string) => (await prepared()).filter((p) => p.name === name);

  it('a hot read is prepared once per connection and reused; nothing else is prepared', async () => {
    const c = await newCommunity();
    const author = await newAgent();
    const post = await createPost(db1, deps1, author.agent, { communitySlug: c, body: 'named statements' });
    const id = (post.data as { id: string }).id;
    for (let i = 0; i < 2; i++) {
      expect((await getPost(deps1.query, id)).body).to.equal('named statements');
      expect((await agentProfile(deps1.query, author.handle)).stats.posts).to.equal(1);
      expect((await listComments(deps1.query, id)).meta.commentsCount).to.equal(0);
    }
    for (const name of ['post_detail', 'agent_profile', 'comment_tree', 'community_by_slug', 'insert_post']) {
      const rows = await named(name);
      expect(rows, name).to.have.length(1);
    }
    // Only declared statements: unnamed SQL (builders, db.raw) is never prepared.
    const declared = new Set(declaredStatements());
    expect((await prepared()).map((p) => p.name).filter((n) => !declared.has(n))).to.deep.equal([]);
  });

  it('writes run their named statements in their own transaction: a comment, then votes on a post and a comment', async () => {
    const c = await newCommunity();
    const author = await newAgent();
    const voter = await newAgent();
    const post = await createPost(db1, deps1, author.agent, { communitySlug: c, body: 'vote on me' });
    const postId = (post.data as { id: string }).id;
    const comment = await db1.transaction((trx) =>
      createComment(trx, deps1, author.agent, postId, { body: 'and on me, @nobody_here' }),
    );
    const commentId = (comment.data as { id: string }).id;
    const up = await castVote(db1, deps1, voter.agent, 'post', postId, 1);
    expect(up.data).to.include({ postId, userVote: 1, score: 1 });
    const down = await db1.transaction((trx) => castVote(trx, deps1, voter.agent, 'comment', commentId, -1));
    expect(down.data).to.include({ commentId, userVote: -1, score: -1 });
    // The refusal is decided by the same named statement.
    const self = await castVote(db1, deps1, author.agent, 'post', postId, 1).catch((e: Error) => e);
    expect(self).to.have.property('code', 'SELF_VOTE_FORBIDDEN');
    expect(await named('comment_target')).to.have.length(1);
    expect(await named('cast_vote_post')).to.have.length(1);
    expect(await named('cast_vote_comment')).to.have.length(1);
    expect((await db1('posts').where({ id: postId }).first('score')).score).to.equal(1);
  });

  it('a comment without mentions, a follow and a reputation read run named statements, once prepared each', async () => {
    const c = await newCommunity();
    const author = await newAgent();
    const other = await newAgent();
    const post = await createPost(db1, deps1, author.agent, { communitySlug: c, body: 'comment on me' });
    const postId = (post.data as { id: string }).id;
    const inserts = async () => (await prepared()).filter((p) => p.name.startsWith('comment_insert_'));
    const before = (await inserts()).length;
    // The same shape twice (one post.commented event, no mention): one statement, prepared once.
    for (const a of [other, await newAgent()]) await createComment(db1, deps1, a.agent, postId, { body: 'a reply' });
    expect((await inserts()).length).to.equal(before + 1);
    expect((await db1('posts').where({ id: postId }).first('comments_count')).comments_count).to.equal(2);
    const f = await setFollow(db1, deps1, other.agent, author.handle, true);
    expect(f.data).to.include({ following: true });
    expect(await named('follow_target')).to.have.length(1);
    const body = JSON.parse(
      (
        await getReputationBody(db1, deps1.query, deps1.caches, author.handle, new Date(), false, 'reputation_v2')
      ).body.toString(),
    );
    expect(body.data).to.include({ handle: '@' + author.handle, model: 'reputation_v2' });
    expect(await named('reputation_agent_score_reputation_v2')).to.have.length(1);
  });

  it('the first page of the feed is planned once per connection, whatever its size (its row count is in its text, not a parameter)', async () => {
    const c = await newCommunity();
    const tag = `named-${Date.now()}`;
    for (let i = 0; i < 3; i++)
      await createPost(db1, deps1, (await newAgent()).agent, { communitySlug: c, body: `${tag} ${i}` });
    // The global feed: earlier suites may have left posts dated later than these (controlled clocks),
    // so each page is checked against the largest one, where these three come newest first.
    const largest = (await feedPage(deps1, { sort: 'new', limit: 50 })).items.map((p) => p.excerpt);
    expect(largest.filter((e) => e.startsWith(tag))).to.deep.equal([`${tag} 2`, `${tag} 1`, `${tag} 0`]);
    for (let i = 0; i < 8; i++)
      for (const limit of [1, 20, 21, 50]) {
        const page = await feedPage(deps1, { sort: 'new', limit });
        expect(page.items.map((p) => p.excerpt)).to.deep.equal(largest.slice(0, limit));
      }
    const plans = (
      await db1.raw(
        "select name, generic_plans, custom_plans from pg_prepared_statements where name like 'feed\\_new\\_%' order by name",
      )
    ).rows;
    // Two shapes (up to the default page, and up to the largest), each planned once and reused.
    expect(plans).to.deep.equal([
      { name: 'feed_new_21', generic_plans: 16, custom_plans: 0 },
      { name: 'feed_new_51', generic_plans: 17, custom_plans: 0 },
    ]);
  });

  it("scoring's batch transaction runs on such a connection and prepares none of its statements", async () => {
    const before = (await prepared()).map((p) => p.name);
    const r = await runFull(deps1);
    expect(r.reputations).to.be.greaterThan(0);
    expect((await prepared()).map((p) => p.name)).to.deep.equal(before);
  });

  it('a name stands for one SQL text', () => {
    statement('test_named_once', 'select ?::int as n');
    expect(statement('test_named_once', 'select ?::int as n').name).to.equal('test_named_once');
    expect(() => statement('test_named_once', 'select ?::int + 1 as n')).to.throw(/already used for other SQL/);
  });

  it('on the pool, a statement runs with its values in order, an escaped \\? stays a literal ?, and values that do not fit its text are refused before it is sent', async () => {
    const s = statement<{ a: number; b: string; has: boolean }>(
      'test_named_values',
      `select ?::int as a, ?::text as b, '{"k":1}'::jsonb \\? 'k' as has`,
    );
    expect((await deps1.query(s, [7, 'x'])).rows).to.deep.equal([{ a: 7, b: 'x', has: true }]);
    // In a transaction (through knex) the same statement answers the same.
    expect((await db1.transaction((trx) => deps1.query(s, [7, 'x'], trx))).rows).to.deep.equal([
      { a: 7, b: 'x', has: true },
    ]);
    const sent: string[] = [];
    const on = (q: { sql: string }) => sent.push(q.sql);
    db1.on('query', on);
    try {
      await deps1.query(s, [1, 'y']);
      expect(sent).to.deep.equal([`select $1::int as a, $2::text as b, '{"k":1}'::jsonb ? 'k' as has`]);
      sent.length = 0;
      const refused = (values: unknown[]) =>
        deps1.query(s, values).then(
          () => null,
          (e: Error) => e.message,
        );
      expect(await refused([1])).to.match(/expected 2 values, got 1/);
      expect(await refused([1, undefined])).to.match(/undefined value/);
      expect(sent).to.deep.equal([]);
    } finally {
      db1.removeListener('query', on);
    }
  });
});
