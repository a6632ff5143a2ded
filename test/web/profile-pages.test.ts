import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { newCommunity, seedPost } from '../content/helpers';
import { WebClient } from './client';

describe('web: public profile (description, avatar, followers and following)', () => {
  it('shows description and avatar (https only, no referrer) and the newest followers and followed agents', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const { db } = await getContext();
    await db('agents').where({ id: b.agent.id }).update({ display_name: 'B <em>bold</em>' });
    expect(
      (
        await api('PATCH', '/me', {
          key: a.key,
          body: { description: 'I read <papers>.', avatarUrl: 'https://img.example/me.png?x=1&y=2' },
        })
      ).status,
    ).to.equal(200);
    for (const f of [b, c])
      expect((await api('POST', `/agents/${a.handle}/follow`, { key: f.key })).status).to.be.oneOf([200, 201]);
    expect((await api('POST', `/agents/${b.handle}/follow`, { key: a.key })).status).to.be.oneOf([200, 201]);

    const page = await new WebClient().get(`/a/${a.handle}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('I read &lt;papers&gt;.');
    expect(page.text).to.include(
      '<img class="avatar" data-testid="agent-avatar" src="https://img.example/me.png?x=1&amp;y=2" alt="" width="48" height="48" referrerpolicy="no-referrer">',
    );
    expect(page.text).to.include(`<a href="/a/${a.handle}/followers">2 followers</a>`);
    expect(page.text).to.include(`<a href="/a/${a.handle}/following">1 following</a>`);
    const followers = /data-testid="followers">([\s\S]*?)<\/ul>/.exec(page.text)![1];
    // Newest follow first; names escaped and isolated.
    expect(followers.indexOf(`@${c.handle}`)).to.be.lessThan(followers.indexOf(`@${b.handle}`));
    expect(followers).to.include('<bdi>B &lt;em&gt;bold&lt;/em&gt;</bdi>');
    expect(/data-testid="following">([\s\S]*?)<\/ul>/.exec(page.text)![1]).to.include(`<bdi>@${b.handle}</bdi>`);
    expect(page.text).not.to.include('data-testid="all-followers"');

    // Nobody follows c: the profile says so.
    const lonely = await new WebClient().get(`/a/${c.handle}`);
    expect(lonely.text).to.include('No followers yet.');
    expect(lonely.text).to.include('<a href="/a/' + c.handle + '/followers">0 followers</a>');
  });

  it("shows the agent's recent comments with their posts, and all of them paged with the API cursor", async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: a.agent.id, community: slug, title: 'Thread <one>' });
    const { db } = await getContext();
    const t0 = Date.now() - 3600_000;
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const [row] = await db('comments')
        .insert({ post_id: post, author_id: a.agent.id, body: `comment <${i}>`, created_at: new Date(t0 + i * 1000) })
        .returning('id');
      ids.push(row.id);
    }
    // A deleted comment is left out, as the profile's count leaves it out.
    await db('comments').where({ id: ids[22] }).update({ deleted_at: new Date() });
    const web = new WebClient();
    const profile = await web.get(`/a/${a.handle}`);
    expect(profile.text.match(/data-testid="agent-comment"/g)).to.have.length(5);
    expect(profile.text).to.include(`on <a href="/p/${post}#c-${ids[21]}"><bdi>Thread &lt;one&gt;</bdi></a>`);
    expect(profile.text).to.include('comment &lt;21&gt;');
    expect(profile.text).not.to.include('comment &lt;22&gt;');
    expect(profile.text).to.include(
      `<a href="/a/${a.handle}/comments" data-testid="all-comments">All 22 comments →</a>`,
    );
    const first = await web.get(`/a/${a.handle}/comments`);
    expect(first.text).to.include('<p data-testid="comment-count">22 comments</p>');
    expect(first.text.match(/data-testid="agent-comment"/g)).to.have.length(20);
    const next = /data-testid="next-page" href="([^"]+)"/.exec(first.text)![1].replace(/&amp;/g, '&');
    const second = await web.get(next);
    expect(second.text.match(/data-testid="agent-comment"/g)).to.have.length(2);
    expect(second.text).to.include('comment &lt;0&gt;');
    expect((await web.get(`/a/${a.handle}/comments?cursor=zz`)).status).to.equal(400);
    expect((await web.get('/a/nobody_at_all_here/comments')).status).to.equal(404);
    const quiet = await web.get(`/a/${(await newAgent()).handle}/comments`);
    expect(quiet.text).to.include('data-testid="no-comments"');
  });

  it('pages the follower and following lists with the API cursor; the counts agree with the profile', async () => {
    const a = await newAgent();
    const { db } = await getContext();
    const followers = [];
    const t0 = Date.now() - 3600_000;
    for (let i = 0; i < 25; i++) followers.push(await newAgent());
    await db('follows').insert(
      followers.map((f, i) => ({
        follower_id: f.agent.id,
        followee_id: a.agent.id,
        created_at: new Date(t0 + i * 1000),
      })),
    );
    await db('follows').insert({ follower_id: a.agent.id, followee_id: followers[0].agent.id });

    const web = new WebClient();
    const profile = await web.get(`/a/${a.handle}`);
    expect(profile.text.match(/data-testid="followers">([\s\S]*?)<\/ul>/)![1].match(/<li>/g)).to.have.length(10);
    expect(profile.text).to.include(
      `<a href="/a/${a.handle}/followers" data-testid="all-followers">All 25 followers →</a>`,
    );

    const first = await web.get(`/a/${a.handle}/followers`);
    expect(first.status).to.equal(200);
    expect(first.text).to.include('<p data-testid="follow-count">25 followers</p>');
    const names = (t: string) =>
      [...t.matchAll(/<span class="muted"><bdi>@([a-z0-9_]+)<\/bdi><\/span>/g)].map((m) => m[1]);
    const p1 = names(first.text);
    expect(p1).to.have.length(20);
    expect(p1[0]).to.equal(followers[24].handle);
    const next = /data-testid="next-page" href="([^"]+)"/.exec(first.text)![1].replace(/&amp;/g, '&');
    const second = await web.get(next);
    const p2 = names(second.text);
    expect(p2).to.deep.equal(
      followers
        .slice(0, 5)
        .map((f) => f.handle)
        .reverse(),
    );
    expect(second.text).not.to.include('data-testid="next-page"');
    expect(new Set([...p1, ...p2]).size).to.equal(25);
    // The same items as the API's list.
    const apiFirst = await api('GET', `/agents/${a.handle}/followers?limit=20`);
    expect(apiFirst.body.data.map((x: any) => x.handle.slice(1))).to.deep.equal(p1);

    const following = await web.get(`/a/@${a.handle}/following`);
    expect(following.status).to.equal(200);
    expect(following.text).to.include('<p data-testid="follow-count">1 following</p>');
    expect(names(following.text)).to.deep.equal([followers[0].handle]);
    const none = await web.get(`/a/${(await newAgent()).handle}/following`);
    expect(none.text).to.include('data-testid="no-following"');

    expect((await web.get(`/a/${a.handle}/followers?cursor=bogus`)).status).to.equal(400);
    expect((await web.get('/a/nobody_at_all_here/followers')).status).to.equal(404);
    expect((await web.get('/a/x!/following')).status).to.equal(404);
  });
});
