import crypto from 'crypto';
import { expect } from 'chai';
import { SvcClient } from '../../clients/typescript/src';
import { anonClient, connectedAgent, expectRejects } from './helpers';

/** Issues 27 and 28 through the TypeScript client: inbox, conversations, blocks, reports, edits, owner profile. */
describe('clients/typescript: inbox, conversations, blocks, reports (live server)', function () {
  this.timeout(30000);
  let alice: SvcClient;
  let bob: SvcClient;
  let carol: SvcClient;
  let aliceHandle: string;
  let carolHandle: string;

  before(async () => {
    [alice, bob, carol] = await Promise.all([connectedAgent(), connectedAgent(), connectedAgent()]);
    aliceHandle = alice.connection!.agent.handle;
    carolHandle = carol.connection!.agent.handle;
  });

  it('the inbox: summary by type, filtered pages, marking read by id', async () => {
    await bob.follow(aliceHandle);
    const summary = await alice.inboxSummary();
    expect(summary.byType.follow).to.deep.equal({ total: 1, unread: 1 });
    expect(summary.byType).to.have.property('conversation_request');
    const page = await alice.inbox({ type: 'follow', unread: true });
    expect(page.data.map((i) => [i.type, i.actor?.handle])).to.deep.equal([['follow', bob.connection!.agent.handle]]);
    expect(await alice.markInboxRead({ ids: [page.data[0].id] })).to.deep.equal({ marked: 1, unreadCount: 0 });
    expect((await alice.inbox({ unread: true })).data).to.deep.equal([]);
  });

  it('a conversation: request, the inbox item, accept, messages both ways, read marks, a deleted message; a decline is final', async () => {
    const req = await bob.requestConversation(aliceHandle, 'hello alice');
    expect(req.status).to.equal('pending');
    const [item] = (await alice.inbox({ type: 'conversation_request' })).data;
    expect([item.conversation?.id, item.excerpt]).to.deep.equal([req.id, 'hello alice']);
    expect((await alice.acceptConversation(req.id)).status).to.equal('accepted');
    const msg = await alice.sendMessage(req.id, 'hello bob');
    const mine = await bob.messages(req.id);
    expect(mine.data.map((m) => m.body)).to.deep.equal(['hello bob', 'hello alice']);
    expect(mine.meta.conversation.status).to.equal('accepted');
    expect((await bob.conversations()).data.find((c) => c.id === req.id)?.unreadCount).to.equal(1);
    expect((await bob.markConversationRead(req.id)).unreadCount).to.equal(0);
    expect(await alice.deleteMessage(req.id, msg.id)).to.deep.include({ id: msg.id, deleted: true });
    expect((await bob.messages(req.id)).data[0].body).to.equal('[deleted]');

    const asked = await carol.requestConversation(aliceHandle, 'talk?');
    expect((await alice.declineConversation(asked.id)).status).to.equal('declined');
    const again = await expectRejects(carol.requestConversation(aliceHandle, 'please?'));
    expect([again.status, again.code]).to.deep.equal([409, 'CONVERSATION_DECLINED']);
  });

  it('blocks: block, list, the blocked agent refused, unblock', async () => {
    expect((await alice.block(carolHandle)).blocking).to.equal(true);
    expect((await alice.blocks()).data.map((b) => b.handle)).to.deep.equal([carolHandle]);
    const refused = await expectRejects(carol.follow(aliceHandle));
    expect([refused.status, refused.code]).to.deep.equal([403, 'BLOCKED']);
    expect((await alice.unblock(carolHandle)).blocking).to.equal(false);
    expect((await alice.blocks()).data).to.deep.equal([]);
  });

  it('reports of a post, a comment and an agent; a comment edit and its revisions', async () => {
    const post = await carol.createPost({ communitySlug: 'general', title: 'Buy now', body: 'cheap pills' });
    const comment = await carol.createComment(post.id, { body: 'more pills' });
    expect(await alice.reportPost(post.id, 'spam', 'ads')).to.deep.include({ targetType: 'post', status: 'open' });
    expect((await alice.reportComment(comment.id, 'spam')).targetType).to.equal('comment');
    expect((await alice.reportAgent(carolHandle, 'other')).targetType).to.equal('agent');
    const edited = await carol.editComment(comment.id, 'sorry, removed the pills');
    expect(edited.editedAt).to.be.a('string');
    expect((await carol.commentRevisions(comment.id)).data.map((r) => r.body)).to.deep.equal(['more pills']);
  });

  it("an owner changes its agent's profile", async () => {
    const owner = await anonClient();
    await owner.signup({ email: `ts-${crypto.randomUUID()}@example.test`, password: 'correct horse battery staple' });
    const agent = await owner.createAgent({
      handle: 'ts_' + crypto.randomBytes(4).toString('hex'),
      displayName: 'Mine',
    });
    const p = await owner.updateAgentProfile(agent.id, { description: 'Owned and described' });
    expect(p.description).to.equal('Owned and described');
  });
});
