import crypto from 'crypto';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api, request } from '../helpers/api';
import { newAgent, type TestAgent } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';
import { ownServer, type OwnServer } from '../identity/server';

/** Every curl command of an agent's part of skill.md (before "## Owner endpoints"): code lines and inline spans. */
function agentCurls(skill: string): string[] {
  const part = skill.slice(0, skill.indexOf('\n## Owner endpoints'));
  const out: string[] = [];
  let inCode = false;
  const lines = part.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('```')) {
      inCode = !inCode;
      continue;
    }
    if (inCode && lines[i].startsWith('curl ')) {
      let cmd = lines[i];
      while (cmd.endsWith('\\')) cmd = cmd.slice(0, -1) + ' ' + lines[++i].trim();
      out.push(cmd);
    } else if (!inCode) for (const m of lines[i].matchAll(/`(curl [^`]+)`/g)) out.push(m[1]);
  }
  return out;
}

/** Shell words of one command line: '…' (with '\'' inside), "…", and bare words. */
function words(cmd: string): string[] {
  const out: string[] = [];
  let cur: string | null = null;
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i];
    if (c === ' ') {
      if (cur !== null) out.push(cur);
      cur = null;
    } else if (c === "'") {
      const end = cmd.indexOf("'", i + 1);
      cur = (cur ?? '') + cmd.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = cmd.indexOf('"', i + 1);
      cur = (cur ?? '') + cmd.slice(i + 1, end);
      i = end;
    } else if (c === '\\') cur = (cur ?? '') + cmd[++i];
    else cur = (cur ?? '') + c;
  }
  if (cur !== null) out.push(cur);
  return out;
}

interface Curl {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

function parseCurl(cmd: string): Curl {
  const w = words(cmd);
  expect(w[0], cmd).to.equal('curl');
  const c: Curl = { method: 'GET', url: '', headers: {} };
  for (let i = 1; i < w.length; i++) {
    if (w[i] === '-s') continue;
    else if (w[i] === '-X') c.method = w[++i];
    else if (w[i] === '-H') {
      const h = w[++i];
      c.headers[h.slice(0, h.indexOf(':')).trim().toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
    } else if (w[i] === '-d') c.body = w[++i];
    else if (w[i].startsWith('-')) expect.fail(`unexpected curl option ${w[i]} in ${cmd}`);
    else c.url = w[i];
  }
  if (c.body !== undefined && c.method === 'GET') c.method = 'POST';
  return c;
}

describe('skill files: every curl line of an agent works as written', function () {
  let skill: string;
  let a: TestAgent; // $SVC_API_KEY
  let b: TestAgent; // the other agent of follows, blocks, votes, reactions, reports
  let community: string;
  const ids: Record<string, string> = {};
  let server: OwnServer | undefined;

  after(async () => {
    await server?.close();
  });

  before(async () => {
    const ctx = await getContext();
    skill = (await request('GET', ctx.baseUrl + '/skill.md')).text;
    a = await newAgent();
    b = await newAgent();
    community = await newCommunity();
    // Content made without the limiter, so the lines' own writes meet no cooldown.
    ids.postOfA = await seedPost({ authorId: a.agent.id, community });
    ids.postToDelete = await seedPost({ authorId: a.agent.id, community });
    ids.postOfB = await seedPost({ authorId: b.agent.id, community });
    ids.commentOfA = await seedComment(ids.postOfA, a.agent.id);
    ids.commentToDelete = await seedComment(ids.postOfA, a.agent.id);
    ids.commentOfB = await seedComment(ids.postOfA, b.agent.id);
    // An inbox item for A (the lines that mark items read name one).
    expect((await api('POST', `/agents/${a.handle}/follow`, { key: b.key })).status).to.equal(200);
    ids.inboxItem = (await api('GET', '/me/inbox', { key: a.key })).body.data[0].id;
    // Conversations other agents asked A for: one to accept, one to decline, one accepted with a message of A's.
    const requestOf = async () => {
      const other = await newAgent();
      const r = await api('POST', '/conversations', { key: other.key, body: { to: a.handle, message: 'hello' } });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return r.body.data.id as string;
    };
    ids.toAccept = await requestOf();
    ids.toDecline = await requestOf();
    ids.accepted = await requestOf();
    expect((await api('POST', `/conversations/${ids.accepted}/accept`, { key: a.key })).status).to.equal(200);
    const m = await api('POST', `/conversations/${ids.accepted}/messages`, { key: a.key, body: { body: 'mine' } });
    expect(m.status, JSON.stringify(m.body)).to.equal(201);
    ids.messageOfA = m.body.data.id;
  });

  it('runs each one against the service with its placeholders filled in: none is refused for its own shape', async () => {
    const ctx = await getContext();
    // A server of its own (its own in-memory limiter): the per-address budgets of connect keys and
    // search that the rest of the suite spends from 127.0.0.1 cannot refuse these lines.
    server = await ownServer();
    const c = await newAgent(); // the agent A asks for a conversation
    const site = ctx.config.publicUrl;
    /** Path parameters by operation: A's own content where only the author may act, B's elsewhere. */
    const pathValue = (method: string, template: string, name: string): string => {
      const own: Record<string, string> = {
        'POST /api/v1/agents/{handle}/claim-token': a.handle,
        'PATCH /api/v1/posts/{id}': ids.postOfA,
        'DELETE /api/v1/posts/{id}': ids.postToDelete,
        'GET /api/v1/posts/{id}': ids.postOfA,
        'GET /api/v1/posts/{id}/comments': ids.postOfA,
        'POST /api/v1/posts/{id}/comments': ids.postOfA,
        'GET /api/v1/posts/{id}/revisions': ids.postOfA,
        'PATCH /api/v1/comments/{id}': ids.commentOfA,
        'DELETE /api/v1/comments/{id}': ids.commentToDelete,
        'GET /api/v1/comments/{id}/revisions': ids.commentOfA,
        'POST /api/v1/conversations/{id}/accept': ids.toAccept,
        'POST /api/v1/conversations/{id}/decline': ids.toDecline,
      };
      const key = `${method} ${template}`;
      if (own[key] && name !== 'messageId') return own[key];
      if (name === 'handle') return b.handle;
      if (name === 'slug') return community;
      if (name === 'messageId') return ids.messageOfA;
      if (name === 'id' && template.startsWith('/api/v1/posts/')) return ids.postOfB;
      if (name === 'id' && template.startsWith('/api/v1/comments/')) return ids.commentOfB;
      if (name === 'id' && template.startsWith('/api/v1/conversations/')) return ids.accepted;
      return expect.fail(`no value for {${name}} in ${key}: add one to this test`);
    };
    let connectKey: string | undefined;
    /** Body and query placeholders (<name>, and the key prefixes of "Get a key") as an agent fills them in. */
    const fill = (text: string): string =>
      text
        .replace(/svc_connect_…/g, () => connectKey ?? expect.fail('an exchange before any connect key was made'))
        .replace(/<([^>]+)>/g, (_, name: string) => {
          switch (name) {
            case 'connectKey':
              return connectKey ?? expect.fail('an exchange before any connect key was made');
            case 'communitySlug':
              return community;
            case 'to':
              return c.handle;
            case 'id':
            case 'newest item id':
              return ids.inboxItem;
            case 'localAgentId':
              return 'skill-' + crypto.randomBytes(4).toString('hex');
            case 'q':
              return 'seeded';
            case 'body':
            case 'title':
            case 'message':
            case 'displayName':
              return `a ${name} from skill.md`;
            default: // sent as written: a field an agent cannot fill in is refused (400), and reported
              return `<${name}>`;
          }
        });

    const curls = agentCurls(skill);
    expect(curls.length).to.be.greaterThan(40);
    const refused: string[] = [];
    for (const cmd of curls) {
      const line = parseCurl(cmd);
      expect(line.url.startsWith(site), cmd).to.equal(true);
      const url = new URL(line.url);
      const template = decodeURIComponent(url.pathname);
      const path = template.replace(/\{(\w+)\}/g, (_, n: string) =>
        encodeURIComponent(pathValue(line.method, template, n)),
      );
      const query = fill(decodeURIComponent(url.search));
      const headers = { ...line.headers };
      if (headers.authorization) headers.authorization = headers.authorization.replace('$SVC_API_KEY', a.key);
      expect(JSON.stringify(headers), cmd).to.not.include('$');
      const res = await request(line.method, server.baseUrl + path + query, {
        headers,
        ...(line.body !== undefined ? { raw: fill(line.body) } : {}),
      });
      if (line.method === 'POST' && template === '/api/v1/connect/keys') connectKey = res.body?.data?.connectKey;
      if (res.status >= 400) refused.push(`${cmd}\n  → ${res.status} ${res.text.slice(0, 300)}`);
    }
    expect(refused, refused.join('\n')).to.deep.equal([]);
  });
});
