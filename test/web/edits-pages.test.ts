import crypto from 'crypto';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';
import { resolveReport } from '../../src/reports/moderation';
import { WebClient } from './client';

describe('web: edit marker and earlier versions on post pages', () => {
  it('marks an edited post and lists its earlier versions (escaped, newest first) on the page and the revisions page', async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    const created = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: slug, title: 'First <title>', body: 'first <b>body</b>', tags: ['one'] },
    });
    const id = created.body.data.id as string;
    const web = new WebClient();
    const plain = await web.get(`/p/${id}`);
    expect(plain.text).not.to.include('data-testid="post-edited"');
    expect(plain.text).not.to.include('data-testid="post-revisions"');
    expect((await web.get(`/p/${id}/revisions`)).text).to.include('data-testid="no-revisions"');

    expect((await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'second body' } })).status).to.equal(200);
    expect((await api('PATCH', `/posts/${id}`, { key: a.key, body: { title: 'Third title' } })).status).to.equal(200);
    const page = await web.get(`/p/${id}`);
    expect(page.text).to.match(
      new RegExp(`<a class="chip" data-testid="post-edited" href="/p/${id}/revisions">edited `),
    );
    expect(page.text).to.include('<bdi>Third title</bdi>');
    expect(page.text).to.include('<summary>2 earlier versions</summary>');
    expect(page.text).to.include('first &lt;b&gt;body&lt;/b&gt;');
    expect(page.text).to.include('<bdi>First &lt;title&gt;</bdi>');

    const revs = await web.get(`/p/${id}/revisions`);
    expect(revs.status).to.equal(200);
    const bodies = [...revs.text.matchAll(/<div class="body">([^<]*)<\/div>/g)].map((m) => m[1]);
    expect(bodies).to.deep.equal(['second body', 'first &lt;b&gt;body&lt;/b&gt;']);
    expect(revs.text).to.include('<span class="chip">#one</span>');
  });

  it('pages through many versions with the API cursor; a foreign cursor is 400', async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    const id = await seedPost({ authorId: a.agent.id, community: slug, title: 'Many' });
    const { db } = await getContext();
    const t0 = Date.now() - 3600_000;
    await db('post_revisions').insert(
      Array.from({ length: 25 }, (_, i) => ({
        post_id: id,
        title: `v${i}`,
        body: `version ${i}`,
        tags: [],
        written_at: new Date(t0 + i * 1000),
        replaced_at: new Date(t0 + (i + 1) * 1000),
      })),
    );
    await db('posts')
      .where({ id })
      .update({ edited_at: new Date(t0 + 25_000) });
    const web = new WebClient();
    const post = await web.get(`/p/${id}`);
    expect(post.text).to.include('<summary>Earlier versions (latest 10)</summary>');
    expect(post.text.match(/data-testid="revision"/g)).to.have.length(10);
    const first = await web.get(`/p/${id}/revisions`);
    expect(first.text.match(/data-testid="revision"/g)).to.have.length(20);
    expect(first.text).to.include('version 24');
    const next = /data-testid="next-page" href="([^"]+)"/.exec(first.text)![1].replace(/&amp;/g, '&');
    const second = await web.get(next);
    expect(second.text.match(/data-testid="revision"/g)).to.have.length(5);
    expect(second.text).to.include('version 0');
    expect(second.text).not.to.include('version 5<');
    expect(second.text).not.to.include('data-testid="next-page"');
    expect((await web.get(`/p/${id}/revisions?cursor=nope`)).status).to.equal(400);
  });

  it('marks an edited comment with a link to its versions; the comment must belong to the post', async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    const postId = await seedPost({ authorId: a.agent.id, community: slug });
    const other = await seedPost({ authorId: a.agent.id, community: slug });
    const c = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'old <words>' } });
    expect(c.status).to.equal(201);
    const cid = c.body.data.id as string;
    const web = new WebClient();
    expect((await web.get(`/p/${postId}`)).text).not.to.include('data-testid="comment-edited"');
    expect((await api('PATCH', `/comments/${cid}`, { key: a.key, body: { body: 'new words' } })).status).to.equal(200);
    const page = await web.get(`/p/${postId}`);
    expect(page.text).to.include(`data-testid="comment-edited" href="/p/${postId}/comments/${cid}/revisions"`);
    const revs = await web.get(`/p/${postId}/comments/${cid}/revisions`);
    expect(revs.status).to.equal(200);
    expect(revs.text).to.include('old &lt;words&gt;');
    expect(revs.text).to.include(`href="/p/${postId}#c-${cid}"`);
    expect((await web.get(`/p/${other}/comments/${cid}/revisions`)).status).to.equal(404);
    expect((await web.get(`/p/${postId}/comments/${crypto.randomUUID()}/revisions`)).status).to.equal(404);
    expect((await web.get(`/p/${postId}/comments/nope/revisions`)).status).to.equal(404);

    // A deleted comment's text, earlier versions included, is gone from the pages.
    expect((await api('DELETE', `/comments/${cid}`, { key: a.key })).status).to.equal(200);
    expect((await web.get(`/p/${postId}`)).text).not.to.include('data-testid="comment-edited"');
    expect((await web.get(`/p/${postId}/comments/${cid}/revisions`)).status).to.equal(404);
  });

  it('a post edited and then removed by moderators stays readable as removed, without its versions', async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    const id = await seedPost({ authorId: a.agent.id, community: slug, body: 'original text' });
    await seedComment(id, a.agent.id);
    expect((await api('PATCH', `/posts/${id}`, { key: a.key, body: { body: 'edited text' } })).status).to.equal(200);
    const reporter = await newAgent({ owner: await newOwner() });
    const rep = await api('POST', `/posts/${id}/report`, { key: reporter.key, body: { reason: 'spam' } });
    const { deps } = await getContext();
    await resolveReport(deps, { label: 'cli:test', ownerId: null }, rep.body.data.id, { uphold: true, hide: true });
    const page = await new WebClient().get(`/p/${id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('[removed by moderators]');
    expect(page.text).not.to.include('original text');
    expect(page.text).not.to.include('data-testid="post-revisions"');
    expect(page.text).to.include('data-testid="comment"');
    expect((await new WebClient().get(`/p/${id}/revisions`)).status).to.equal(404);
  });
});
