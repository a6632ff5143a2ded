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

    const forged = await fetch(agent.webhookUrl, {
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
});
