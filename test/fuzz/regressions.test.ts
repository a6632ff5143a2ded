import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent, newOwner } from '../helpers/factories';
import { rawRequest, rowState, stateDiff } from './world';

/** Inputs the route fuzzer once found to answer 500; kept deterministic here. */
describe('fuzz regressions', () => {
  it('a JSON body with __proto__ keys (valid JSON the parser refuses) is 400 VALIDATION_FAILED on any route, never 500', async () => {
    const ctx = await getContext();
    for (const path of ['/api/v1/communities', '/api/v1/posts']) {
      for (const body of ['{"__proto__":null}', '{"__proto__":{"polluted":"yes"}}']) {
        const r = await rawRequest(ctx.baseUrl, {
          method: path.endsWith('posts') ? 'POST' : 'GET',
          path,
          headers: { 'content-type': 'application/json' },
          body,
        });
        expect(r.status, `${path} ${body}`).to.be.oneOf([400, 401]);
        expect(r.body.error.code).to.match(/^(VALIDATION_FAILED|UNAUTHORIZED)$/);
        if (r.status === 400)
          expect(r.body.error.details).to.deep.equal([
            { path: 'body', message: 'must not have a __proto__ or constructor.prototype property' },
          ]);
      }
    }
    expect(({} as any).polluted).to.equal(undefined);
  });

  it('a constructor.prototype key path anywhere in a JSON body is 400 VALIDATION_FAILED and writes nothing', async () => {
    const ctx = await getContext();
    const { session } = await newOwner();
    const headers = {
      'content-type': 'application/json',
      cookie: `svc_session=${session.cookie}`,
      'x-csrf-token': session.csrfToken,
    };
    const before = await rowState();
    const bodies = [
      '{"constructor":{"prototype":{"polluted":"yes"}}}',
      '{"displayName":"x","handle":"ctor_proto","constructor":{"prototype":null}}',
      '{"scopes":["read"],"label":{"a":[{"constructor":{"prototype":{}}}]}}',
    ];
    for (const body of bodies) {
      const r = await rawRequest(ctx.baseUrl, {
        method: 'POST',
        path: '/api/v1/owner/agents',
        headers,
        body,
      });
      expect(r.status, body).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
      expect(r.body.error.details).to.deep.equal([
        { path: 'body', message: 'must not have a __proto__ or constructor.prototype property' },
      ]);
    }
    expect(stateDiff(before, await rowState())).to.equal('');
    // A key named constructor that holds no prototype is ordinary data.
    const ok = await rawRequest(ctx.baseUrl, {
      method: 'POST',
      path: '/api/v1/owner/agents',
      headers,
      body: '{"handle":"ctor_plain","displayName":"constructor","model":null}',
    });
    expect(ok.status).to.equal(201);
  });

  it('search with NUL bytes answers 200 or 400, never 500, and writes nothing', async () => {
    const ctx = await getContext();
    const before = await rowState();
    for (const q of ['%00%5C%00%EF%BF%BD', 'ab%00cd', '%00%00', '%00a']) {
      const r = await rawRequest(ctx.baseUrl, {
        method: 'GET',
        path: `/api/v1/discovery/search?q=${q}`,
        localAddress: '127.0.0.77',
      });
      expect(r.status, q).to.be.oneOf([200, 400]);
      if (r.status === 400) expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    expect(stateDiff(before, await rowState())).to.equal('');
  });

  it('NUL characters in any body string (connect key installationId) are 400 VALIDATION_FAILED, never 500', async () => {
    const ctx = await getContext();
    const before = await rowState();
    const body = JSON.stringify({
      maxUses: 3,
      runtimeLabel: 'w9',
      installationId: '\u0000%\ud83d\ud83d\u0000/\u0000 \u0000',
    });
    const r = await rawRequest(ctx.baseUrl, {
      method: 'POST',
      path: '/api/v1/connect/keys',
      headers: { 'content-type': 'application/json' },
      body,
      localAddress: '127.0.0.78',
    });
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    expect(r.body.error.details).to.deep.equal([
      { path: 'body/installationId', message: 'must not contain NUL characters' },
    ]);
    expect(stateDiff(before, await rowState())).to.equal('');
  });

  it('lone surrogates in \\u escapes are stored as U+FFFD, also where the text goes into JSON (the inbox item of a message): 201, never 500', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const opened = await api('POST', '/conversations', { key: a.key, body: { to: b.handle, message: 'hi' } });
    expect(opened.status).to.equal(201);
    const id = opened.body.data.id;
    expect((await api('POST', `/conversations/${id}/accept`, { key: b.key })).status).to.equal(200);
    // The body as the fuzzer sent it: a low surrogate alone, a high one before a quote, one at the end.
    const r = await rawRequest(ctx.baseUrl, {
      method: 'POST',
      path: `/api/v1/conversations/${id}/messages`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` },
      body: '{"body":"%%\\ude00\\ud83d\\"/ \\ud83d\\ude00 \\ud83d"}',
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const body = '%%\uFFFD\uFFFD"/ \u{1F600} \uFFFD';
    expect(r.body.data.body).to.equal(body);
    const inbox = await ctx.db('inbox_items').where({ agent_id: b.agent.id }).orderBy('created_at', 'desc').first();
    expect(inbox.data.excerpt).to.equal(body);
    const read = await api('GET', `/conversations/${id}/messages`, { key: b.key });
    expect(read.body.data[0].body).to.equal(body);
  });

  it('a deeply nested body (30,000 levels) on a route accepting extra keys is never 500', async () => {
    const ctx = await getContext();
    const deep = '{"a":'.repeat(30000) + '1' + '}'.repeat(30000);
    const r = await rawRequest(ctx.baseUrl, {
      method: 'POST',
      path: '/api/v1/connect/keys',
      headers: { 'content-type': 'application/json' },
      body: deep,
      localAddress: '127.0.0.79',
    });
    expect(r.status).to.be.within(200, 499);
  });
});
