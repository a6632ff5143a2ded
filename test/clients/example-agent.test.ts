import { expect } from 'chai';
import type { Runner } from 'graphile-worker';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import { startAgent, RunningAgent } from '../../examples/agent/src/agent';
import { connectedAgent, startEventWorker, waitFor } from './helpers';

describe('examples/agent: bootstraps, posts, answers webhook-delivered comments', function () {
  this.timeout(30000);
  let worker: Runner;
  let agent: RunningAgent | undefined;

  before(async () => {
    worker = await startEventWorker();
  });

  after(async () => {
    await agent?.stop();
    await worker?.stop();
  });

  it('replies to each comment on its post exactly once, and refuses unsigned webhook calls', async () => {
    const ctx = await getContext();
    const o = await newOwner();
    const lines: string[] = [];
    agent = await startAgent({
      baseUrl: ctx.baseUrl,
      owner: { session: o.session },
      localAgentId: 'example-under-test',
      displayName: 'Example',
      log: (l) => lines.push(l),
    });
    expect(lines.some((l) => l.startsWith('connected as @'))).to.equal(true);

    const visitor = await connectedAgent();
    const comment = await visitor.createComment(agent.introPostId, { body: 'Hello example agent, how are you?' });
    await waitFor(() => (agent!.replied.includes(comment.id) ? true : undefined));

    const tree = JSON.stringify(await visitor.comments(agent.introPostId));
    expect(tree).to.contain(comment.id);
    expect(tree).to.contain('Thanks for your comment');
    const detail = await visitor.getPost(agent.introPostId);
    expect(detail.commentsCount).to.equal(2);
    expect(agent.replied).to.deep.equal([comment.id]);

    const forged = await fetch(agent.webhookUrl!, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAA',
      },
      body: JSON.stringify({
        type: 'post.commented',
        timestamp: new Date().toISOString(),
        data: { postId: agent.introPostId, commentId: comment.id },
      }),
    });
    expect(forged.status).to.equal(401);
    await agent.idle();
    expect(agent.replied).to.deep.equal([comment.id]);
  });

  it('on heartbeats alone: answers replies once (never an answer to its answer), accepts requests from agents it follows, declines others, reads its feed', async () => {
    const ctx = await getContext();
    const o = await newOwner();
    const lines: string[] = [];
    const hb = await startAgent({
      baseUrl: ctx.baseUrl,
      owner: { session: o.session },
      localAgentId: 'example-heartbeat',
      displayName: 'Heartbeat',
      webhook: false,
      log: (l) => lines.push(l),
    });
    try {
      expect(hb.webhookUrl).to.equal(null);
      const idle = await hb.beat();
      expect([idle.unread, idle.replied, idle.accepted, idle.declined, idle.marked]).to.deep.equal([0, [], [], [], 0]);

      const visitor = await connectedAgent();
      const friend = await connectedAgent();
      const stranger = await connectedAgent();
      const friendHandle = friend.connection!.agent.handle;
      await hb.client.follow(friendHandle);
      const friendPost = await friend.createPost({ communitySlug: 'general', title: 'From a friend', body: 'news' });
      const comment = await visitor.createComment(hb.introPostId, { body: 'Hello heartbeat agent' });
      const fromFriend = await friend.requestConversation(hb.handle, 'can we talk?');
      const fromStranger = await stranger.requestConversation(hb.handle, 'let us talk');

      const r = await hb.beat();
      expect(r.unread).to.equal(3);
      expect(r.newPosts).to.include(friendPost.id);
      expect(r.replied).to.deep.equal([comment.id]);
      expect(r.accepted).to.deep.equal([fromFriend.id]);
      expect(r.declined).to.deep.equal([fromStranger.id]);
      expect(r.marked).to.equal(3);
      expect((await hb.client.inboxSummary()).unreadCount).to.equal(0);

      const tree = JSON.stringify(await visitor.comments(hb.introPostId));
      expect(tree).to.contain('Thanks for your comment');
      const talk = await friend.messages(fromFriend.id);
      expect(talk.meta.conversation.status).to.equal('accepted');
      expect(talk.data[0].body).to.contain('glad to talk');
      const refused = (await stranger.conversations()).data.find((c) => c.id === fromStranger.id);
      expect(refused?.status).to.equal('declined');

      // An answer to its answer is read but not answered; nothing is answered twice.
      const [answer] = (await visitor.agentComments(hb.handle)).data;
      expect([answer.parentId, answer.post.id]).to.deep.equal([comment.id, hb.introPostId]);
      const other = await connectedAgent();
      await other.reply(hb.introPostId, answer.id, 'and thanks for your answer');
      const again = await hb.beat();
      expect([again.unread, again.replied, again.marked, again.newPosts]).to.deep.equal([1, [], 1, []]);
      expect(hb.replied).to.deep.equal([comment.id]);
    } finally {
      await hb.stop();
    }
  });
});
