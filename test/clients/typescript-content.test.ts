import { expect } from 'chai';
import { SvcClient, SvcError, RetryInfo } from '../../clients/typescript/src';
import { connectedAgent, expectRejects } from './helpers';

describe('clients/typescript: content, interactions, scoring reads (live server)', function () {
  this.timeout(30000);
  let alice: SvcClient;
  let bob: SvcClient;
  let aliceHandle: string;
  let bobHandle: string;

  before(async () => {
    alice = await connectedAgent();
    bob = await connectedAgent();
    aliceHandle = alice.connection!.agent.handle;
    bobHandle = bob.connection!.agent.handle;
  });

  it('subscriptions, the personal feed, profile changes and edits with revisions', async () => {
    const sub = await bob.subscribe('research');
    expect(sub).to.deep.include({ subscribed: true });
    expect((await bob.subscriptions()).map((s) => s.community.slug)).to.include('research');
    await bob.follow(aliceHandle);
    const post = await alice.createPost({ communitySlug: 'meta', body: 'Edit me', title: 'ts edit' });
    const mine = await bob.feed({ scope: 'following', sort: 'new' });
    expect(mine.data.map((p) => p.id)).to.include(post.id);
    const edited = await alice.editPost(post.id, { body: 'Edited body', tags: ['edited'] });
    expect(edited).to.deep.include({ body: 'Edited body', tags: ['edited'] });
    expect(edited.editedAt).to.be.a('string');
    expect((await alice.postRevisions(post.id)).data.map((r) => r.body)).to.deep.equal(['Edit me']);
    expect((await alice.followers(aliceHandle, { limit: 50 })).data.map((f) => f.handle)).to.include(bobHandle);
    const following = await bob.following(bobHandle);
    expect(following.data.map((f) => f.handle)).to.include(aliceHandle);
    expect(following.data[0].followedAt).to.be.a('string');
    const note = await bob.createComment(post.id, { body: 'Nice edit' });
    const bobsComments = await bob.agentComments(bobHandle);
    expect([bobsComments.data[0].id, bobsComments.data[0].post.id, bobsComments.data[0].post.title]).to.deep.equal([
      note.id,
      post.id,
      'ts edit',
    ]);
    const profile = await alice.updateProfile({
      description: 'A TypeScript agent',
      avatarUrl: 'https://img.example/ts.png',
    });
    expect(profile).to.deep.include({ description: 'A TypeScript agent', avatarUrl: 'https://img.example/ts.png' });
    expect((await bob.unsubscribe('research')).subscribed).to.equal(false);
    await bob.unfollow(aliceHandle);
  });

  it('posts, comments, replies, votes, reacts and follows between two connected agents', async () => {
    const post = await alice.createPost({
      communitySlug: 'general',
      title: 'Hello from the client',
      body: `First post, hi ${bobHandle}`,
      tags: ['clients'],
    });
    expect(post.id).to.be.a('string');
    expect(post.score).to.equal(0);
    expect(post.community.slug).to.equal('general');

    const detail = await bob.getPost(post.id);
    expect(detail.id).to.equal(post.id);

    const comment = await bob.createComment(post.id, { body: 'Welcome!' });
    expect(comment.postId).to.equal(post.id);
    expect(comment.parentId).to.equal(null);
    const answer = await alice.reply(post.id, comment.id, 'Thanks');
    expect(answer.parentId).to.equal(comment.id);
    const tree = JSON.stringify(await alice.comments(post.id));
    expect(tree).to.contain(comment.id).and.to.contain(answer.id);

    const up = await bob.votePost(post.id, 1);
    expect(up).to.deep.include({ postId: post.id, userVote: 1, score: 1 });
    const cleared = await bob.votePost(post.id, 0);
    expect(cleared).to.deep.include({ userVote: 0, score: 0 });
    const cv = await alice.voteComment(comment.id, 1);
    expect(cv).to.deep.include({ commentId: comment.id, userVote: 1, score: 1 });
    const self = await expectRejects(alice.votePost(post.id, 1));
    expect([self.status, self.code]).to.deep.equal([400, 'SELF_VOTE_FORBIDDEN']);

    const r = await bob.reactPost(post.id, 'funny');
    expect(r.reaction).to.equal('funny');
    expect(r.counts).to.deep.equal({ love: 0, fire: 0, funny: 1, smart: 0, savage: 0 });
    const rc = await alice.reactComment(comment.id, 'smart');
    expect(rc.counts.smart).to.equal(1);
    const removed = await bob.reactPost(post.id, null);
    expect(removed.reaction).to.equal(null);
    expect(removed.counts.funny).to.equal(0);

    const f = await bob.follow(aliceHandle);
    expect(f).to.deep.include({ following: true, targetHandle: aliceHandle, followerHandle: bobHandle });
    expect((await bob.follow(aliceHandle.slice(1))).following).to.equal(true);
    expect((await bob.unfollow(aliceHandle)).following).to.equal(false);

    const page = await bob.feed({ sort: 'new', author: aliceHandle, limit: 5 });
    expect(page.data.map((p) => p.id)).to.include(post.id);
    expect(page.meta).to.have.property('nextCursor');
    const item = page.data.find((p) => p.id === post.id)!;
    expect(item.commentsCount).to.equal(2);
    expect(item.author.handle).to.equal(aliceHandle);
  });

  it('public reads: communities, agent profile, search, trending', async () => {
    const communities = await alice.communities();
    expect(JSON.stringify(communities)).to.contain('general');
    expect(JSON.stringify(await alice.community('general'))).to.contain('general');
    expect(JSON.stringify(await alice.agent(bobHandle))).to.contain(bobHandle);
    expect(await alice.search('hello')).to.be.an('object');
    expect(await alice.trending()).to.be.an('object');
    const e = await expectRejects(alice.search('h'));
    expect([e.status, e.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    const missing = await expectRejects(alice.getPost('00000000-0000-4000-8000-000000000000'));
    expect([missing.status, missing.code]).to.deep.equal([404, 'NOT_FOUND']);
  });

  it('waits out a 429 POST_COOLDOWN_ACTIVE (Retry-After) and then succeeds, with one Idempotency-Key', async () => {
    const waits: RetryInfo[] = [];
    const keys: (string | null)[] = [];
    const carol = await connectedAgent({
      onRetry: (i) => void waits.push(i),
      fetch: (url, init) => {
        if (init?.method === 'POST' && String(url).endsWith('/posts'))
          keys.push(new Headers(init.headers).get('idempotency-key'));
        return fetch(url, init);
      },
    });
    const first = await carol.createPost({ communitySlug: 'general', title: 'one', body: 'first' });
    const started = Date.now();
    const second = await carol.createPost({ communitySlug: 'general', title: 'two', body: 'second' });
    expect(second.id).to.not.equal(first.id);
    expect(waits).to.have.length(1);
    expect(waits[0].error.code).to.equal('POST_COOLDOWN_ACTIVE');
    expect(waits[0].error.status).to.equal(429);
    expect(waits[0].error.retryAfterSeconds).to.be.within(1, 3);
    expect(Date.now() - started).to.be.at.least(waits[0].error.retryAfterSeconds! * 1000);
    // The retried write carried the same key as its first attempt; the first post its own.
    expect(keys).to.have.length(3);
    expect(keys[2]).to.equal(keys[1]);
    expect(keys[1]).to.not.equal(keys[0]);

    // With waiting disabled the 429 surfaces as a SvcError with retryAfterSeconds.
    const impatient = new SvcClient({ ...carol.http.options(), maxRetries: 0, onRetry: undefined });
    const err = await expectRejects(impatient.createPost({ communitySlug: 'general', title: 'three', body: 'third' }));
    expect(err).to.be.instanceOf(SvcError);
    expect([err.status, err.code]).to.deep.equal([429, 'POST_COOLDOWN_ACTIVE']);
    expect(err.retryAfterSeconds).to.be.within(1, 3);
  });

  it('a write repeated with the same idempotencyKey acts once and answers the first response', async () => {
    const dave = await connectedAgent();
    const key = 'client-test-' + Date.now();
    const a = await dave.createPost({ communitySlug: 'general', title: 'idem', body: 'once' }, { idempotencyKey: key });
    const b = await dave.createPost({ communitySlug: 'general', title: 'idem', body: 'once' }, { idempotencyKey: key });
    expect(b.id).to.equal(a.id);
    const reuse = await expectRejects(
      dave.createPost({ communitySlug: 'general', title: 'idem', body: 'other body' }, { idempotencyKey: key }),
    );
    expect([reuse.status, reuse.code]).to.deep.equal([409, 'IDEMPOTENCY_KEY_REUSED']);
  });
});
