import { expect } from 'chai';
import { POLICIES } from '../../src/limits/policy';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, TestOwner } from '../helpers/factories';
import { newCommunity, seedPost } from '../content/helpers';
import { resolveReport } from '../../src/reports/moderation';
import { WebClient } from './client';

/** A browser logged in as `o` (its session cookie), for the dashboard pages. */
function browserOf(o: TestOwner): WebClient {
  const c = new WebClient();
  c.cookies.set('svc_session', o.session.cookie);
  return c;
}

describe('web: agent dashboard (profile, inbox, subscriptions, conversations, blocks, reports)', () => {
  describe('profile form', () => {
    it('shows the current profile and saves through the API service; the public profile and the API show it', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const c = browserOf(o);
      const path = `/dashboard/agents/${a.agent.id}/profile`;
      const page = await c.get(path);
      expect(page.status).to.equal(200);
      expect(page.text).to.include('data-testid="profile-form"');
      expect(page.text).to.include('value="Agent"');
      const csrf = await c.csrf(path);

      const saved = await c.post(path, {
        _csrf: csrf,
        displayName: 'Rénée <b>',
        description: 'Line one\r\nline <two> & "three"',
        avatarUrl: 'https://img.example/a.png',
      });
      expect(saved.status).to.equal(302);
      expect(saved.location).to.equal(`${path}?done=profile_updated`);
      expect((await c.get(saved.location!)).text).to.include('Profile saved');

      const apiProfile = await api('GET', `/agents/${a.handle}`);
      expect(apiProfile.body.data).to.include({
        displayName: 'Rénée <b>',
        description: 'Line one\nline <two> & "three"',
        avatarUrl: 'https://img.example/a.png',
      });
      const pub = await new WebClient().get(`/a/${a.handle}`);
      expect(pub.text).to.include('<bdi>Rénée &lt;b&gt;</bdi>');
      expect(pub.text).to.include('Line one\nline &lt;two&gt; &amp; &quot;three&quot;');
      expect(pub.text).to.match(/<img [^>]*src="https:\/\/img\.example\/a\.png"[^>]*referrerpolicy="no-referrer"/);

      // Empty avatar removes it; the form shows the saved values back.
      expect(
        (await c.post(path, { _csrf: csrf, displayName: 'Plain', description: '', avatarUrl: '' })).status,
      ).to.equal(302);
      expect((await api('GET', `/agents/${a.handle}`)).body.data).to.include({ avatarUrl: null, description: '' });
      expect((await new WebClient().get(`/a/${a.handle}`)).text).not.to.include('data-testid="agent-avatar"');
    });

    it('refuses what PATCH /owner/agents/{id} refuses, with the error in the form and nothing changed', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const c = browserOf(o);
      const path = `/dashboard/agents/${a.agent.id}/profile`;
      const csrf = await c.csrf(path);
      const cases: [Record<string, string>, RegExp][] = [
        [{ displayName: 'Ok', description: '', avatarUrl: 'http://img.example/a.png' }, /avatarUrl must match pattern/],
        [{ displayName: 'Ok', description: 'x'.repeat(501), avatarUrl: '' }, /description must NOT have more than 500/],
        [{ displayName: 'evil\u202ename', description: '', avatarUrl: '' }, /displayName must match pattern/],
        [{ displayName: '   ', description: '', avatarUrl: '' }, /displayName/],
        [
          { displayName: 'Ok', description: '', avatarUrl: 'https://user:pw@img.example/a.png' },
          /user name or password/,
        ],
      ];
      for (const [form, message] of cases) {
        const res = await c.post(path, { _csrf: csrf, ...form });
        expect(res.status, JSON.stringify(form)).to.equal(400);
        expect(res.text).to.match(message);
        expect(res.text).to.include('data-testid="profile-form"');
      }
      const { db } = await getContext();
      const row = await db('agents').where({ id: a.agent.id }).first('display_name', 'description', 'avatar_url');
      expect(row.display_name).to.equal('Agent');
      expect(row.avatar_url).to.equal(null);
    });

    it('shares the edit limit with the API (429 with Retry-After, shown in the form) and refuses a suspended agent', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const c = browserOf(o);
      const path = `/dashboard/agents/${a.agent.id}/profile`;
      const csrf = await c.csrf(path);
      for (let i = 1; i < POLICIES.edit.perMinute; i++)
        expect((await c.post(path, { _csrf: csrf, displayName: `Web ${i}` })).status, `edit ${i}`).to.equal(302);
      // The API's PATCH /me counts against the same budget.
      expect((await api('PATCH', '/me', { key: a.key, body: { displayName: 'Api' } })).status).to.equal(200);
      const limited = await c.post(path, { _csrf: csrf, displayName: 'One too many' });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(limited.text).to.include('data-testid="profile-form"');
      expect(limited.text).to.include('value="One too many"');
      expect((await api('GET', `/agents/${a.handle}`)).body.data.displayName).to.equal('Api');

      const s = await newAgent({ owner: o });
      const { db } = await getContext();
      await db('agents').where({ id: s.agent.id }).update({ status: 'suspended' });
      const sp = `/dashboard/agents/${s.agent.id}/profile`;
      const refused = await c.post(sp, { _csrf: csrf, displayName: 'Back' });
      expect(refused.status).to.equal(403);
      expect(refused.text).to.include('suspended');
      expect((await db('agents').where({ id: s.agent.id }).first('display_name')).display_name).to.equal('Agent');
    });

    it('needs the CSRF field and the owner: another owner gets 403 and changes nothing', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const path = `/dashboard/agents/${a.agent.id}/profile`;
      const c = browserOf(o);
      const noCsrf = await c.post(path, { displayName: 'Hijack' });
      expect(noCsrf.status).to.equal(403);
      expect(noCsrf.text).to.include('CSRF_TOKEN_INVALID');
      const other = browserOf(await newOwner());
      expect((await other.get(path)).status).to.equal(403);
      const post = await other.post(path, { _csrf: await other.csrf(), displayName: 'Hijack' });
      expect(post.status).to.equal(403);
      expect((await new WebClient().get(path)).status).to.equal(302);
      expect((await api('GET', `/agents/${a.handle}`)).body.data.displayName).to.equal('Agent');
    });
  });

  describe('inbox summary and subscriptions', () => {
    it('shows counts by type, the newest items (escaped, names in <bdi>) and the subscriptions', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const b = await newAgent();
      const { db } = await getContext();
      await db('agents').where({ id: b.agent.id }).update({ display_name: '<script>x</script>' });
      const slug = await newCommunity();
      expect((await api('POST', `/agents/${a.handle}/follow`, { key: b.key })).status).to.be.oneOf([200, 201]);
      const post = await api('POST', '/posts', {
        key: b.key,
        body: { communitySlug: slug, title: 'Hello there', body: `Hi @${a.handle}, welcome` },
      });
      expect(post.status).to.equal(201);
      expect((await api('POST', `/communities/${slug}/subscribe`, { key: a.key })).status).to.equal(200);

      const c = browserOf(o);
      const dash = await c.get('/dashboard');
      expect(dash.text).to.match(/data-testid="agent-unread">2 unread items</);
      const page = await c.get(`/dashboard/agents/${a.agent.id}/inbox`);
      expect(page.status).to.equal(200);
      expect(page.text).to.include('<strong>2 unread items</strong> · 2 items in all');
      expect(page.text).to.match(/<tr data-type="mention"><td>mention<\/td><td>1<\/td><td>1<\/td>/);
      expect(page.text).to.match(/<tr data-type="follow"><td>follow<\/td><td>1<\/td><td>1<\/td>/);
      expect(page.text).to.match(/<tr data-type="reply"><td>reply<\/td><td>0<\/td><td>0<\/td>/);
      expect(page.text.match(/data-testid="inbox-item"/g)).to.have.length(2);
      expect(page.text).to.include('<bdi>&lt;script&gt;x&lt;/script&gt;</bdi>');
      expect(page.text).not.to.include('<script>x');
      expect(page.text).to.include(`href="/p/${post.body.data.id}"`);
      expect(page.text).to.include('<bdi>Hello there</bdi>');
      expect(page.text).to.include('data-testid="subscriptions"');
      expect(page.text).to.include(`href="/c/${slug}"`);

      // Marking read is the agent's; the page follows the counters.
      await api('POST', '/me/inbox/read', { key: a.key, body: { all: true } });
      const after = await c.get(`/dashboard/agents/${a.agent.id}/inbox`);
      expect(after.text).to.include('<strong>0 unread items</strong> · 2 items in all');
      expect((await c.get('/dashboard')).text).to.match(/data-testid="agent-unread">0 unread items</);
    });

    it('names conversation, message and moderation items, with a link to read the conversation', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const ob = await newOwner();
      const b = await newAgent({ owner: ob });
      const { db, deps } = await getContext();
      await db('agents').where({ id: b.agent.id }).update({ display_name: 'Bee <u>' });
      const conv = await api('POST', '/conversations', {
        key: b.key,
        body: { to: a.handle, message: 'can we <talk>?' },
      });
      expect(conv.status).to.equal(201);
      expect((await api('POST', `/conversations/${conv.body.data.id}/accept`, { key: a.key })).status).to.equal(200);
      expect(
        (await api('POST', `/conversations/${conv.body.data.id}/messages`, { key: b.key, body: { body: 'thanks' } }))
          .status,
      ).to.equal(201);
      const slug = await newCommunity();
      const post = await seedPost({ authorId: b.agent.id, community: slug, title: 'Bad post' });
      const rep = await api('POST', `/posts/${post}/report`, { key: a.key, body: { reason: 'spam' } });
      await resolveReport(deps, { label: 'cli:test', ownerId: null }, rep.body.data.id, { uphold: true, hide: true });

      const page = await browserOf(o).get(`/dashboard/agents/${a.agent.id}/inbox`);
      const read = `<a href="/dashboard/agents/${a.agent.id}/conversations/${conv.body.data.id}">read</a>`;
      expect(page.text).to.include(`<bdi>Bee &lt;u&gt;</bdi></a> asked it for a private conversation · ${read}`);
      expect(page.text).to.include('can we &lt;talk&gt;?');
      expect(page.text).to.include(`<bdi>Bee &lt;u&gt;</bdi></a> sent it a message · ${read}`);
      expect(page.text).to.include('A report it made (post) was upheld by a moderator');
      expect(page.text).to.match(/<tr data-type="report_resolved"><td>report resolved<\/td><td>1<\/td><td>1<\/td>/);

      const authorPage = await browserOf(ob).get(`/dashboard/agents/${b.agent.id}/inbox`);
      expect(authorPage.text).to.include(`Moderators removed its post on <a href="/p/${post}">`);
      expect(authorPage.text).to.include('(reported as spam)');
    });

    it('says so when there is nothing, and is the owner’s only (403 for another owner, login for visitors)', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const page = await browserOf(o).get(`/dashboard/agents/${a.agent.id}/inbox`);
      expect(page.text).to.include('data-testid="inbox-empty"');
      expect(page.text).to.include('data-testid="no-subscriptions"');
      expect(page.text).to.include('<strong>0 unread items</strong> · 0 items in all');
      expect((await browserOf(await newOwner()).get(`/dashboard/agents/${a.agent.id}/inbox`)).status).to.equal(403);
      const anon = await new WebClient().get(`/dashboard/agents/${a.agent.id}/inbox`);
      expect(anon.status).to.equal(302);
      expect(anon.location).to.match(/^\/login\?next=/);
    });
  });

  describe('conversations and blocks', () => {
    async function requested() {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const b = await newAgent();
      const res = await api('POST', '/conversations', {
        key: b.key,
        body: { to: a.handle, message: 'hi <img src=x> want to talk?' },
      });
      expect(res.status).to.equal(201);
      return { o, a, b, id: res.body.data.id as string };
    }

    it('lists the agent’s conversations and shows one read-only, escaped; 404 for a conversation it is not in', async () => {
      const { o, a, b, id } = await requested();
      const c = browserOf(o);
      const list = await c.get(`/dashboard/agents/${a.agent.id}/conversations`);
      expect(list.status).to.equal(200);
      expect(list.text).to.include(`data-conversation-id="${id}"`);
      expect(list.text).to.include(`<bdi>@${b.handle}</bdi>`);
      expect(list.text).to.include('<span class="chip">pending</span>');
      expect(list.text).to.include(`action="/dashboard/agents/${a.agent.id}/conversations/${id}/decline"`);
      const read = await c.get(`/dashboard/agents/${a.agent.id}/conversations/${id}`);
      expect(read.status).to.equal(200);
      expect(read.text).to.include('hi &lt;img src=x&gt; want to talk?');
      expect(read.text).not.to.include('<img src=x>');
      expect(read.text).not.to.match(/<textarea|name="body"/);

      // Another agent of the same owner is not in it: 404, as for anyone else.
      const sibling = await newAgent({ owner: o });
      expect((await c.get(`/dashboard/agents/${sibling.agent.id}/conversations/${id}`)).status).to.equal(404);
      // Another owner cannot open the agent's pages at all.
      const other = browserOf(await newOwner());
      expect((await other.get(`/dashboard/agents/${a.agent.id}/conversations/${id}`)).status).to.equal(403);
      expect((await other.get(`/dashboard/agents/${a.agent.id}/conversations`)).status).to.equal(403);
      expect((await c.get(`/dashboard/agents/${a.agent.id}/conversations?cursor=bogus`)).status).to.equal(400);
    });

    it('declines on the agent’s behalf (CSRF field required; the requester cannot decline)', async () => {
      const { o, a, b, id } = await requested();
      const c = browserOf(o);
      const path = `/dashboard/agents/${a.agent.id}/conversations/${id}/decline`;
      expect((await c.post(path, {})).status).to.equal(403);
      expect((await api('GET', '/conversations', { key: b.key })).body.data[0].status).to.equal('pending');
      const ok = await c.post(path, { _csrf: await c.csrf() });
      expect(ok.status).to.equal(302);
      expect((await c.get(ok.location!)).text).to.include('Conversation declined');
      expect((await api('GET', '/conversations', { key: b.key })).body.data[0].status).to.equal('declined');
      const again = await api('POST', '/conversations', { key: b.key, body: { to: a.handle, message: 'again?' } });
      expect(again.body.error.code).to.equal('CONVERSATION_DECLINED');

      // The requester's owner sees no decline button and is refused.
      const ob = await newOwner();
      const mine = await newAgent({ owner: ob });
      const req = await api('POST', '/conversations', { key: mine.key, body: { to: a.handle, message: 'hello' } });
      const cb = browserOf(ob);
      const list = await cb.get(`/dashboard/agents/${mine.agent.id}/conversations`);
      expect(list.text).to.include(`data-conversation-id="${req.body.data.id}"`);
      expect(list.text).not.to.include('/decline"');
      const refused = await cb.post(`/dashboard/agents/${mine.agent.id}/conversations/${req.body.data.id}/decline`, {
        _csrf: await cb.csrf(),
      });
      expect(refused.status).to.equal(403);
      expect(refused.text).to.include('NOT_RECIPIENT');
    });

    it('blocks from a conversation (which ends it), lists blocks, unblocks; refusals shown in the form', async () => {
      const { o, a, b, id } = await requested();
      const c = browserOf(o);
      const csrf = await c.csrf();
      const blocks = `/dashboard/agents/${a.agent.id}/blocks`;
      expect((await c.post(blocks, { handle: '@' + b.handle })).status).to.equal(403);
      const blocked = await c.post(blocks, { _csrf: csrf, handle: '@' + b.handle });
      expect(blocked.status).to.equal(302);
      expect(blocked.location).to.equal(`${blocks}?done=blocked`);
      const page = await c.get(blocked.location!);
      expect(page.text).to.include('data-testid="block"');
      expect(page.text).to.include(`<bdi>@${b.handle}</bdi>`);
      expect((await api('GET', '/me/blocks', { key: a.key })).body.data[0].handle).to.equal('@' + b.handle);
      // The block ended the conversation: gone from both lists and the page.
      expect((await c.get(`/dashboard/agents/${a.agent.id}/conversations`)).text).to.include(
        'data-testid="no-conversations"',
      );
      expect((await c.get(`/dashboard/agents/${a.agent.id}/conversations/${id}`)).status).to.equal(404);
      const msg = await api('POST', '/conversations', { key: b.key, body: { to: a.handle, message: 'hey' } });
      expect(msg.body.error.code).to.equal('BLOCKED');

      for (const [handle, status, text] of [
        ['nobody_here_' + Date.now().toString(36), 404, 'Agent not found'],
        [a.handle, 400, 'cannot block itself'],
        ['x!', 400, 'handle must match pattern'],
      ] as const) {
        const res = await c.post(blocks, { _csrf: csrf, handle });
        expect(res.status, handle).to.equal(status);
        expect(res.text).to.include(text);
        expect(res.text).to.include(`value="${handle}"`);
      }

      const un = await c.post(`${blocks}/remove`, { _csrf: csrf, handle: '@' + b.handle });
      expect(un.status).to.equal(302);
      expect((await c.get(un.location!)).text).to.include('data-testid="no-blocks"');
      expect((await api('GET', '/me/blocks', { key: a.key })).body.data).to.deep.equal([]);

      // Another owner cannot block on this agent's behalf.
      const other = browserOf(await newOwner());
      expect((await other.post(blocks, { _csrf: await other.csrf(), handle: b.handle })).status).to.equal(403);
      expect((await api('GET', '/me/blocks', { key: a.key })).body.data).to.deep.equal([]);
    });

    it('pages messages (a deleted one reads "[deleted]") and blocks with the API cursors', async () => {
      const { o, a, b, id } = await requested();
      const { db } = await getContext();
      await db('conversations').where({ id }).update({ status: 'accepted' });
      const t0 = Date.now() - 3600_000;
      await db('conversation_messages').insert(
        Array.from({ length: 24 }, (_, i) => ({
          conversation_id: id,
          author_id: i % 2 ? a.agent.id : b.agent.id,
          body: `message ${i}`,
          created_at: new Date(t0 + (i + 1) * 1000),
          deleted_at: i === 23 ? new Date() : null,
        })),
      );
      const c = browserOf(o);
      const first = await c.get(`/dashboard/agents/${a.agent.id}/conversations/${id}`);
      const bodies = (t: string) => [...t.matchAll(/<div class="body[^"]*">([^<]*)<\/div>/g)].map((m) => m[1]);
      const p1 = bodies(first.text);
      expect(p1).to.have.length(20);
      // Newest first: the request's message (sent now), then the seeded ones of an hour ago.
      expect(p1.slice(0, 3)).to.deep.equal(['hi &lt;img src=x&gt; want to talk?', '[deleted]', 'message 22']);
      const next = /data-testid="next-page" href="([^"]+)"/.exec(first.text)![1].replace(/&amp;/g, '&');
      const p2 = bodies((await c.get(next)).text);
      // 24 seeded and the request's message: 25 in all.
      expect(p1.length + p2.length).to.equal(25);
      expect(p2.slice(-1)[0]).to.equal('message 0');

      const blocked = [];
      for (let i = 0; i < 22; i++) blocked.push(await newAgent());
      await db('blocks').insert(
        blocked.map((x, i) => ({
          blocker_id: a.agent.id,
          blocked_id: x.agent.id,
          created_at: new Date(t0 + i * 1000),
        })),
      );
      const bp = await c.get(`/dashboard/agents/${a.agent.id}/blocks`);
      expect(bp.text.match(/data-testid="block"/g)).to.have.length(20);
      const bnext = /data-testid="next-page" href="([^"]+)"/.exec(bp.text)![1].replace(/&amp;/g, '&');
      const bp2 = await c.get(bnext);
      expect(bp2.text.match(/data-testid="block"/g)).to.have.length(2);
      expect(bp2.text).to.include(`<bdi>@${blocked[0].handle}</bdi>`);
      expect((await c.get(`/dashboard/agents/${a.agent.id}/blocks?cursor=x`)).status).to.equal(400);
    });

    it('a suspended agent cannot block or decline through its owner', async () => {
      const { o, a, b, id } = await requested();
      const { db } = await getContext();
      await db('agents').where({ id: a.agent.id }).update({ status: 'suspended' });
      const c = browserOf(o);
      const csrf = await c.csrf();
      const res = await c.post(`/dashboard/agents/${a.agent.id}/blocks`, { _csrf: csrf, handle: b.handle });
      expect(res.status).to.equal(403);
      expect(res.text).to.include('AGENT_SUSPENDED');
      const dec = await c.post(`/dashboard/agents/${a.agent.id}/conversations/${id}/decline`, { _csrf: csrf });
      expect(dec.status).to.equal(403);
      expect((await api('GET', '/conversations', { key: b.key })).body.data[0].status).to.equal('pending');
    });
  });

  describe('reports made', () => {
    it('lists reports by the owner and by its agents, with their status; none of others', async () => {
      const o = await newOwner();
      const a = await newAgent({ owner: o });
      const b = await newAgent();
      const slug = await newCommunity();
      const post = await seedPost({ authorId: b.agent.id, community: slug });
      const c = browserOf(o);
      expect((await c.get('/dashboard')).text).to.include('data-testid="no-reports-made"');
      expect((await api('POST', `/posts/${post}/report`, { key: a.key, body: { reason: 'spam' } })).status).to.equal(
        201,
      );
      expect(
        (await api('POST', `/agents/${b.handle}/report`, { session: o.session, body: { reason: 'harassment' } }))
          .status,
      ).to.equal(201);
      // A report by someone else's agent is not this owner's.
      await api('POST', `/agents/${a.handle}/report`, { key: b.key, body: { reason: 'other' } });
      const dash = await c.get('/dashboard');
      expect(dash.text.match(/data-testid="report-made"/g)).to.have.length(2);
      expect(dash.text).to.include(`<a href="/p/${post}">post</a>`);
      expect(dash.text).to.include('<span class="chip">harassment</span>');
      expect(dash.text).to.include(`<bdi>@${a.handle}</bdi>`);
      expect(dash.text).to.match(/<td>you<\/td>/);
      expect(dash.text).not.to.include('<span class="chip">other</span>');
    });
  });
});
