import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, uniq } from '../helpers/factories';
import { createAgent, issueApiKey } from '../../src/identity/service';
import { queries } from '../helpers/queries';
import { newCommunity, seedPost } from '../content/helpers';
import { WebClient } from './client';

const XSS = `<script>alert("x")</script><img src=x onerror=alert(1)>"'&`;

describe('web: public pages (feed, community, post, agent, search)', () => {
  it('hostile path segments and query values on every page: never a 500, always an HTML answer', async function () {
    this.timeout(60_000);
    const segments = [
      '%00',
      'a%00b',
      '%ED%A0%80',
      '%E0%A4%A',
      '..',
      '%2e%2e',
      'x'.repeat(2000),
      '%25',
      '%C0%AF',
      'NULL',
      '00000000-0000-0000-0000-000000000000',
    ];
    const values = [
      '%00',
      '%ED%A0%80',
      '%E0%A4%A',
      'x'.repeat(3000),
      '-1',
      '1e309',
      '%7B%7D',
      '__proto__',
      '2026-W99',
      '%22%3E%3Cscript%3E',
    ];
    const pages = ['/c/:x', '/a/:x', '/agents/:x', '/p/:x', '/dashboard/agents/:x', '/dashboard/agents/:x/webhooks/:x'];
    const queries = [
      '/?cursor=',
      '/?sort=',
      '/?tag=',
      '/search?q=',
      '/leaderboards?category=',
      '/leaderboards?week=',
      '/communities?cursor=',
      '/claim?token=',
      '/verify-email?token=',
      '/login?next=',
      '/notifications?cursor=',
      '/c/general?tag=',
    ];
    const owner = new WebClient();
    await owner.signup();
    for (const c of [new WebClient(), owner]) {
      // Each query parameter also sent twice (a list, not a string).
      const twice = queries.map((q) => `${q}a&${q.slice(q.indexOf('?') + 1)}b`).concat('/signup?next=a&next=b');
      const paths = [
        ...pages.flatMap((p) => segments.map((seg) => p.replaceAll(':x', seg))),
        ...queries.flatMap((q) => values.map((v) => q + v)),
        ...twice,
      ];
      for (const path of paths) {
        const res = await c.get(path);
        expect(res.status, `${path.slice(0, 80)} → ${res.text.slice(0, 200)}`).to.be.below(500);
        if (res.status !== 302) expect(res.headers.get('content-type'), path.slice(0, 80)).to.match(/text\/html/);
      }
    }
  });

  it('renders post body, title, tags and display name with script/HTML payloads as text', async () => {
    const { db } = await getContext();
    const community = await newCommunity();
    const agent = await createAgent(db, {
      handle: uniq('xss'),
      displayName: `<b onmouseover=alert(1)>Evil</b><script>alert(2)</script>`,
    });
    const { key } = await issueApiKey(db, agent.id, ['read', 'post', 'comment']);
    const post = await api('POST', '/posts', {
      key,
      body: { communitySlug: community, title: `T ${XSS}`, body: `Body ${XSS}\n</div></main><iframe src="//evil">` },
    });
    expect(post.status).to.equal(201);
    const commenter = await newAgent();
    const comment = await api('POST', `/posts/${post.body.data.id}/comments`, {
      key: commenter.key,
      body: { body: `reply ${XSS}` },
    });
    expect(comment.status).to.equal(201);

    for (const path of [
      `/p/${post.body.data.id}`,
      `/c/${community}`,
      `/a/${agent.handle}`,
      '/?sort=new',
      `/search?q=${encodeURIComponent('Evil')}`,
    ]) {
      const res = await new WebClient().get(path);
      expect(res.status, path).to.equal(200);
      expect(res.text, path).not.to.include('<script>alert');
      expect(res.text, path).not.to.include('<img src=x');
      expect(res.text, path).not.to.include('<b onmouseover');
      expect(res.text, path).not.to.include('<iframe');
      expect(res.text.match(/<script/g)!.length, path).to.equal(1); // the one static script tag
    }
    const page = await new WebClient().get(`/p/${post.body.data.id}`);
    expect(page.text).to.include(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;',
    );
    expect(page.text).to.include('&lt;b onmouseover=alert(1)&gt;Evil&lt;/b&gt;');
    expect(page.text).to.include('&lt;/div&gt;&lt;/main&gt;&lt;iframe src=&quot;//evil&quot;&gt;');
  });

  it('home feed: hot/new/top tabs, community and tag filters, cursor pagination', async () => {
    const community = await newCommunity();
    const other = await newCommunity();
    const { agent } = await newAgent();
    const tag = uniq('t').replace(/_/g, '-').slice(0, 20);
    const base = Date.now() - 3600_000;
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      ids.push(
        await seedPost({
          authorId: agent.id,
          community,
          title: `paged ${tag} ${i}`,
          tags: [tag],
          score: i === 5 ? 100 : 0,
          createdAt: new Date(base + i * 1000),
        }),
      );
    }
    const elsewhere = await seedPost({ authorId: agent.id, community: other, title: `elsewhere ${tag}`, tags: [tag] });

    const c = new WebClient();
    const newest = await c.get(`/?sort=new&community=${community}`);
    expect(newest.status).to.equal(200);
    const shown = [...newest.text.matchAll(/data-post-id="([^"]+)"/g)].map((m) => m[1]);
    expect(shown).to.have.length(20);
    expect(shown[0]).to.equal(ids[22]);
    expect(newest.text).not.to.include(elsewhere);
    expect(newest.text).to.match(/<a class="on" href="[^"]*">new<\/a>/);
    const next = /data-testid="next-page" href="([^"]+)"/.exec(newest.text)![1].replace(/&amp;/g, '&');
    expect(next).to.include('sort=new');
    expect(next).to.include(`community=${community}`);
    const page2 = await c.get(next);
    const shown2 = [...page2.text.matchAll(/data-post-id="([^"]+)"/g)].map((m) => m[1]);
    expect(shown2).to.deep.equal([ids[2], ids[1], ids[0]]);
    expect(page2.text).not.to.include('data-testid="next-page"');

    const top = await c.get(`/?sort=top&community=${community}`);
    expect([...top.text.matchAll(/data-post-id="([^"]+)"/g)][0][1]).to.equal(ids[5]);

    const byTag = await c.get(`/?sort=new&tag=${tag}`);
    expect(byTag.text).to.include(elsewhere);
    expect(byTag.text).to.include(`#${tag}`);

    const community404 = await c.get(`/c/no-such-${tag}`);
    expect(community404.status).to.equal(404);
    const communityPage = await c.get(`/c/${community}?sort=new`);
    expect(communityPage.text).to.include('23 posts');
    expect(communityPage.text).to.include(ids[22]);

    expect((await c.get('/?sort=sideways')).status).to.equal(400);
    expect((await c.get('/?cursor=garbage')).status).to.equal(400);
  });

  it('post page shows the comment tree nested, with deleted comments in place', async () => {
    const community = await newCommunity();
    const author = await newAgent();
    const a = await newAgent();
    const b = await newAgent();
    const post = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: community, title: 'Thread', body: 'root body' },
    });
    const postId = post.body.data.id;
    const c1 = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'first level' } });
    const c2 = await api('POST', `/posts/${postId}/comments`, {
      key: b.key,
      body: { body: 'second level', parentId: c1.body.data.id },
    });
    expect(c2.status).to.equal(201);
    const page = await new WebClient().get(`/p/${postId}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('data-testid="post-body">root body<');
    // The reply sits inside the first comment's list item.
    const first = page.text.indexOf(`id="c-${c1.body.data.id}"`);
    const nested = page.text.indexOf(`id="c-${c2.body.data.id}"`);
    expect(first).to.be.greaterThan(0);
    expect(nested).to.be.greaterThan(first);
    expect(page.text.slice(first, nested)).to.include('<ul class="comments">');
    expect(page.text).to.include('2 comments');

    const del = await api('DELETE', `/comments/${c1.body.data.id}`, { key: a.key });
    expect(del.status).to.equal(200);
    const after = await new WebClient().get(`/p/${postId}`);
    expect(after.text).to.include('[deleted]');
    expect(after.text).to.include('second level');

    expect((await new WebClient().get('/p/not-a-uuid')).status).to.equal(404);
    expect((await new WebClient().get('/p/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
  });

  it('agent profile shows stats and recent posts; unknown handles are 404', async () => {
    const community = await newCommunity();
    const { agent } = await newAgent();
    await seedPost({ authorId: agent.id, community, title: 'profile post' });
    const page = await new WebClient().get(`/a/${agent.handle}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('profile post');
    expect(page.text).to.include('1 post ·');
    expect((await new WebClient().get('/a/nobody_here_x')).status).to.equal(404);
    expect((await new WebClient().get('/a/bad!handle')).status).to.equal(404);
    const legacy = await new WebClient().get(`/agents/${agent.handle}`);
    expect(legacy.status).to.equal(301);
    expect(legacy.location).to.equal(`/a/${agent.handle}`);
  });

  it('community page counts in words of the right number: 1 post, not 1 posts', async () => {
    const community = await newCommunity();
    const { agent } = await newAgent();
    await seedPost({ authorId: agent.id, community, title: 'the only post' });
    const page = await new WebClient().get(`/c/${community}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('1 post ·');
    expect(page.text).to.not.include('1 posts');
    expect(page.text).to.not.match(/\b1 active agents\b/);
  });

  it('search finds agents and posts, and explains a too-short query', async () => {
    const community = await newCommunity();
    const { agent } = await newAgent({ handle: uniq('findme') });
    await seedPost({ authorId: agent.id, community, title: 'zebracorn sighting', body: 'a zebracorn was seen' });
    const r = await new WebClient().get('/search?q=zebracorn');
    expect(r.status).to.equal(200);
    expect(r.text).to.include('zebracorn sighting');
    const byHandle = await new WebClient().get(`/search?q=${agent.handle}`);
    expect(byHandle.text).to.include(`href="/a/${agent.handle}"`);
    const short = await new WebClient().get('/search?q=z');
    expect(short.status).to.equal(400);
    expect(short.text).to.include('at least 2 characters');
    expect((await new WebClient().get('/search')).status).to.equal(200);
  });

  it('pages cost a constant number of queries whatever the number of posts or comments (no N+1)', async () => {
    const { db, deps } = await getContext();
    const small = await newCommunity();
    const big = await newCommunity();
    const authors = await Promise.all([newAgent(), newAgent(), newAgent()]);
    await seedPost({ authorId: authors[0].agent.id, community: small });
    for (let i = 0; i < 25; i++) await seedPost({ authorId: authors[i % 3].agent.id, community: big, tags: ['nplus'] });
    const lonely = await seedPost({ authorId: authors[0].agent.id, community: small });
    const busy = await seedPost({ authorId: authors[0].agent.id, community: big });
    let parent: string | null = null;
    for (let i = 0; i < 30; i++) {
      const [row]: { id: string }[] = await db('comments')
        .insert({
          post_id: busy,
          parent_id: i % 3 === 0 ? null : parent,
          author_id: authors[i % 3].agent.id,
          body: 'c' + i,
        })
        .returning('id');
      parent = row.id;
    }
    const counted = async (path: string) => {
      // Cold counts: a read cache warmed by an earlier request would make equal pages differ.
      deps.caches.setTtl('*', 0);
      deps.caches.feedItems.clear();
      try {
        const { n, value: r } = await queries(() => new WebClient().get(path));
        expect(r.status, path).to.equal(200);
        return n;
      } finally {
        deps.caches.setTtl('*', null);
      }
    };
    expect(await counted(`/c/${big}?sort=new`)).to.equal(await counted(`/c/${small}?sort=new`));
    expect(await counted(`/?community=${big}`)).to.equal(await counted(`/?community=${small}`));
    expect(await counted(`/p/${busy}`)).to.equal(await counted(`/p/${lonely}`));
    // One post against many (an agent without posts reads no items' parts: one query less).
    const fresh = await newAgent();
    await seedPost({ authorId: fresh.agent.id, community: small });
    expect(await counted(`/a/${authors[1].handle}`)).to.equal(await counted(`/a/${fresh.handle}`));
    expect(await counted(`/p/${busy}`)).to.be.at.most(2);
  });
});
