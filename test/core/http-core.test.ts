import net from 'net';
import pino from 'pino';
import zlib from 'zlib';
import { expect } from 'chai';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { rawRequest } from '../fuzz/world';
import { newAgent } from '../helpers/factories';
import { queries } from '../helpers/queries';
import { seedPost } from '../content/helpers';
import { apiRoutes } from '../../src/routes';
import { createApp } from '../../src/app';
import { createHttpServer } from '../../src/boot';
import { fullPath } from '../../src/http/openapi';

/**
 * Counts the contexts Koa builds (one for each request it answers), to know which path answered a
 * request: the app's own createContext wrapped on this instance.
 */
function koaContexts(app: unknown): () => number {
  const koa = app as { createContext: (...a: unknown[]) => unknown };
  const createContext = koa.createContext;
  let n = 0;
  koa.createContext = function (this: unknown, ...a: unknown[]) {
    n++;
    return createContext.apply(this, a);
  };
  return () => n;
}

describe('HTTP core', () => {
  it('GET /health reports database, cache and queue with latencies', async () => {
    const r = await api('GET', '/health');
    expect(r.status).to.equal(200);
    expect(r.body.data.status).to.be.oneOf(['ok', 'degraded']);
    for (const k of ['database', 'cache', 'queue']) {
      expect(r.body.data[k].ok).to.be.a('boolean');
      expect(r.body.data[k].latencyMs).to.be.a('number');
    }
    expect(r.body.data.database.ok).to.equal(true);
    expect(r.headers.get('x-request-id')).to.match(/.{8,}/);
  });

  it('echoes a sane incoming X-Request-Id', async () => {
    const r = await api('GET', '/health', { headers: { 'x-request-id': 'req-12345678' } });
    expect(r.headers.get('x-request-id')).to.equal('req-12345678');
  });

  it('Strict-Transport-Security on every answer when PUBLIC_URL is https, never over plain http', async () => {
    const ctx = await getContext();
    expect((await api('GET', '/health')).headers.get('strict-transport-security')).to.equal(null);
    const app = createApp({ ...ctx.deps, config: { ...ctx.deps.config, publicUrl: 'https://svc.example' } });
    const server = createHttpServer(5000, ctx.deps.log);
    server.on('request', app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
      for (const path of ['/api/v1/health', '/api/v1/nope', '/login']) {
        const res = await fetch(base + path);
        expect(res.headers.get('strict-transport-security'), path).to.equal('max-age=31536000');
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('unknown routes are 404 NOT_FOUND in the envelope', async () => {
    const r = await api('GET', '/nope');
    expect(r.status).to.equal(404);
    expect(r.body).to.deep.equal({ error: { code: 'NOT_FOUND', message: 'No such route' } });
  });

  it('any method on an unknown API path is 404 NOT_FOUND, a wrong method on a known one 405 METHOD_NOT_ALLOWED, in the envelope', async () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const p of ['/nope', '/posts/00000000-0000-4000-8000-000000000000/unknown', '/.well-known/nope']) {
        const r = await api(m, p);
        expect(r.status, `${m} ${p}`).to.equal(404);
        expect(r.headers.get('content-type'), `${m} ${p}`).to.match(/^application\/json/);
        expect(r.body.error.code).to.equal('NOT_FOUND');
      }
    }
    for (const [m, p] of [
      ['PUT', '/me'],
      ['PATCH', '/posts'],
      ['DELETE', '/health'],
      ['POST', '/leaderboards'],
    ]) {
      const r = await api(m, p);
      expect(r.status, `${m} ${p}`).to.equal(405);
      expect(r.body.error.code, `${m} ${p}`).to.equal('METHOD_NOT_ALLOWED');
      expect(r.headers.get('allow'), `${m} ${p}`).to.be.a('string');
    }
    // Web pages keep their own answers.
    const page = await api('GET', '/api-docs-that-do-not-exist'.replace('/api-', '/no-'));
    expect(page.status).to.equal(404);
  });

  it('routes match whatever the case of the path and with a trailing slash; the Allow of a wrong method lists its own path’s methods', async () => {
    for (const p of ['/LeaderBoards/weeks', '/leaderboards/weeks/', '/HEALTH', '/.well-known/svc.json/']) {
      const r = await api('GET', p);
      expect(r.status, p).to.equal(200);
    }
    const r = await api('DELETE', '/Leaderboards');
    expect(r.status).to.equal(405);
    expect(r.headers.get('allow')).to.equal('HEAD, GET');
    expect((await api('GET', '/leaderboardsx')).status).to.equal(404);
  });

  it('an API body is JSON whatever its Content-Type: parsed, or 400 INVALID_JSON, never dropped; a bare JSON value is 400 VALIDATION_FAILED', async () => {
    const a = await newAgent();
    const body = JSON.stringify({ communitySlug: 'general', title: 'typed loosely', body: 'sent as text/plain' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
      const r = await api('POST', '/posts', {
        raw: body,
        key: (await newAgent()).key,
        headers: { 'content-type': type },
      });
      expect(r.status, `${type}: ${r.text}`).to.equal(201);
      expect((await api('GET', `/posts/${r.body.data.id}`)).body.data.title).to.equal('typed loosely');
    }
    const { db } = await getContext();
    const before = Number((await db('posts').where({ author_id: a.agent.id }).count({ n: '*' }))[0].n);
    for (const [type, raw] of [
      ['text/plain', '{bad'],
      ['application/x-www-form-urlencoded', 'communitySlug=general&body=x'],
      ['multipart/form-data; boundary=x', '--x--'],
    ]) {
      const r = await api('POST', '/posts', { raw, key: a.key, headers: { 'content-type': type } });
      expect(r.status, `${type}: ${r.text}`).to.equal(400);
      expect(r.body.error.code).to.equal('INVALID_JSON');
    }
    // A bare JSON value is JSON, only not an object: the schema's answer, as for an array.
    for (const raw of ['null', '"x"', '42', 'true', '[]']) {
      const r = await api('POST', '/posts', { raw, key: a.key });
      expect(r.status, `${raw}: ${r.text}`).to.equal(400);
      expect(r.body.error.code, raw).to.equal('VALIDATION_FAILED');
      expect(r.body.error.details, raw).to.deep.equal([{ path: 'body', message: 'must be object' }]);
    }
    expect(Number((await db('posts').where({ author_id: a.agent.id }).count({ n: '*' }))[0].n)).to.equal(before);
  });

  it('Content-Encoding: gzip, deflate and br bodies are decoded; bytes that fail to decode are 400 INVALID_JSON, an unknown encoding 415', async () => {
    const a = await newAgent();
    const json = Buffer.from(JSON.stringify({ communitySlug: 'general', title: 'zipped', body: 'sent compressed' }));
    const ok = await api('POST', '/posts', {
      raw: zlib.gzipSync(json),
      key: a.key,
      headers: { 'content-encoding': 'gzip' },
    });
    expect(ok.status, ok.text).to.equal(201);
    const { db } = await getContext();
    const count = async () => Number((await db('posts').where({ author_id: a.agent.id }).count({ n: '*' }))[0].n);
    const before = await count();
    const broken: Array<[string, Buffer]> = [
      ['gzip', json],
      ['deflate', json],
      ['br', json],
      ['gzip', zlib.gzipSync(json).subarray(0, 12)],
    ];
    for (const [encoding, raw] of broken) {
      const r = await api('POST', '/posts', { raw, key: a.key, headers: { 'content-encoding': encoding } });
      expect(r.status, `${encoding}: ${r.text}`).to.equal(400);
      expect(r.body.error.code).to.equal('INVALID_JSON');
    }
    const unknown = await api('POST', '/posts', { raw: json, key: a.key, headers: { 'content-encoding': 'foo' } });
    expect(unknown.status).to.equal(415);
    expect(unknown.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    expect(await count()).to.equal(before);
  });

  /** The web process's server over the test database, its log lines (debug and up) kept in `lines`. */
  async function serverWithLog(requestTimeoutMs: number) {
    const ctx = await getContext();
    const lines: string[] = [];
    const log = pino({ level: 'debug', base: undefined }, { write: (l: string) => void lines.push(l) });
    const server = createHttpServer(requestTimeoutMs, log);
    const app = createApp({ ...ctx.deps, log });
    server.on('request', app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    return {
      app,
      lines,
      /** Writes `bytes` (then `drip`s a space every 200 ms if asked) and reads until the server closes. */
      send: (bytes: string, drip = false) =>
        new Promise<{ text: string; closedAfterMs: number }>((resolve, reject) => {
          const started = Date.now();
          const sock = net.connect(port, '127.0.0.1');
          let text = '';
          sock.on('data', (d) => (text += d.toString()));
          sock.on('error', reject);
          const timer = drip ? setInterval(() => sock.writable && sock.write(' '), 200) : undefined;
          sock.on('close', () => {
            clearInterval(timer);
            resolve({ text, closedAfterMs: Date.now() - started });
          });
          sock.write(bytes);
        }),
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  /** The envelope of a raw HTTP answer. */
  const envelopeText = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);
  const envelopeOf = (text: string) => JSON.parse(envelopeText(text));

  it('a request trickled byte by byte is answered 408 REQUEST_TIMEOUT in the envelope and dropped after REQUEST_TIMEOUT_MS, and logged as 408', async function () {
    this.timeout(15_000);
    const srv = await serverWithLog(1000);
    try {
      const { text, closedAfterMs } = await srv.send(
        'POST /api/v1/owner/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
        true,
      );
      expect(text).to.match(/^HTTP\/1\.1 408/);
      expect(envelopeOf(text)).to.deep.equal({
        error: { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' },
      });
      expect(closedAfterMs).to.be.within(900, 5000);
      await new Promise((r) => setTimeout(r, 100));
      const access = srv.lines
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'request' && l.path === '/api/v1/owner/login');
      expect(access.map((l) => l.status)).to.deep.equal([408]);
    } finally {
      await srv.close();
    }
  });

  it('an anonymous read answered from the response cache is byte for byte the answer of the full path (but its request id and date), with its own access line', async () => {
    const ctx = await getContext();
    const srv = await serverWithLog(5000);
    const path = '/api/v1/leaderboards?category=funny&limit=7';
    const get = (id: string) =>
      srv.send(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n`);
    const requestIdOf = (text: string) => /^X-Request-Id: (.*)\r$/m.exec(text)?.[1];
    // Neither the request id nor the date may be compared between two answers.
    const rest = (text: string) => text.replace(/^(X-Request-Id|Date): .*\r\n/gm, '');
    try {
      ctx.deps.caches.leaderboards.invalidate();
      const full = await queries(() => get('cache-test-full-01'));
      const cached = await queries(() => get('cache-test-hit-0002'));
      expect(full.n, 'the first read runs its query').to.be.greaterThan(0);
      expect(cached.n, 'the second is answered from memory').to.equal(0);
      expect(full.value.text).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(rest(cached.value.text)).to.equal(rest(full.value.text));
      expect([requestIdOf(full.value.text), requestIdOf(cached.value.text)]).to.deep.equal([
        'cache-test-full-01',
        'cache-test-hit-0002',
      ]);
      await new Promise((r) => setTimeout(r, 50));
      const access = srv.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
      expect(
        access.map(({ requestId, method, path: p, status }) => ({ requestId, method, path: p, status })),
      ).to.deep.equal(
        ['cache-test-full-01', 'cache-test-hit-0002'].map((requestId) => ({
          requestId,
          method: 'GET',
          path: '/api/v1/leaderboards',
          status: 200,
        })),
      );
      for (const l of access) expect(l.ms).to.be.a('number').and.at.least(0);
    } finally {
      await srv.close();
    }
  });

  it('an anonymous GET of a public read (post, comment tree, profile) is answered without Koa, byte for byte as the full path answers it (but its request id and date), errors and access lines included', async () => {
    const srv = await serverWithLog(5000);
    const contexts = koaContexts(srv.app);
    const author = await newAgent();
    const other = await newAgent();
    const post = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: 'general', title: 'direct', body: 'a "quoted" body é 🙂 \\ <b>&', tags: ['x'] },
    });
    expect(post.status).to.equal(201);
    const id = post.body.data.id;
    const c = await api('POST', `/posts/${id}/comments`, { key: other.key, body: { body: 'first' } });
    await api('POST', `/posts/${id}/comments`, { key: author.key, body: { body: 'reply', parentId: c.body.data.id } });
    const get = (path: string, rid: string, headers = '') =>
      srv.send(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${rid}\r\n${headers}Connection: close\r\n\r\n`);
    const rest = (text: string) => text.replace(/^(X-Request-Id|Date): .*\r\n/gm, '');
    const paths = [
      `/api/v1/posts/${id}`,
      `/api/v1/posts/${id}/comments`,
      `/api/v1/agents/${author.handle}`,
      `/api/v1/agents/@${author.handle}`,
      `/api/v1/agents/%40${author.handle}`,
      `/api/v1/posts/${id}?any=query`,
      `/API/V1/POSTS/${id}/`,
      '/api/v1/posts/00000000-0000-4000-8000-000000000000',
      '/api/v1/posts/not-an-id',
      '/api/v1/agents/no_such_agent_here',
      '/api/v1/agents/x',
    ];
    try {
      for (const [i, path] of paths.entries()) {
        const before = contexts();
        const direct = await get(path, `direct-read-${i}`);
        expect(contexts(), `${path}: answered before Koa`).to.equal(before);
        // A cookie that is no session makes the request not anonymous: the full path, same answer.
        const full = await get(path, `full-read-${i}`, 'Cookie: other=1\r\n');
        expect(contexts(), `${path}: answered by Koa`).to.equal(before + 1);
        expect(direct.text, path).to.match(/^HTTP\/1\.1 (200|404) /);
        expect(rest(direct.text), path).to.equal(rest(full.text));
        expect(/^X-Request-Id: (.*)\r$/m.exec(direct.text)?.[1]).to.equal(`direct-read-${i}`);
      }
      expect(envelopeOf((await get(paths[0], 'direct-read-body')).text).data.body).to.equal(
        'a "quoted" body é 🙂 \\ <b>&',
      );
      expect(envelopeOf((await get(paths[7], 'direct-read-404')).text)).to.deep.equal({
        error: { code: 'NOT_FOUND', message: 'Post not found' },
      });
      await new Promise((r) => setTimeout(r, 50));
      const access = srv.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
      const line = (rid: string) => {
        const l = access.find((a) => a.requestId === rid);
        return l && { method: l.method, path: l.path, status: l.status };
      };
      for (const i of paths.keys()) expect(line(`direct-read-${i}`)).to.deep.equal(line(`full-read-${i}`));
    } finally {
      await srv.close();
    }
  });

  it('an anonymous GET of the feed is answered without Koa, byte for byte as the full path answers it (but its request id and date): query forms, cursors, errors, response cache entries and access lines', async () => {
    const srv = await serverWithLog(5000);
    const { deps } = await getContext();
    const contexts = koaContexts(srv.app);
    const author = await newAgent();
    const tag = `direct-${Date.now().toString(36)}`;
    const t0 = Date.now() - 60_000;
    for (let i = 0; i < 3; i++)
      await seedPost({
        authorId: author.agent.id,
        community: 'general',
        title: `feed "${i}" é 🙂`,
        body: 'a \\ <b>&'.repeat(40),
        tags: [tag, 'x'],
        score: i,
        createdAt: new Date(t0 + i * 1000),
      });
    const cursor = (await api('GET', `/feed?sort=new&limit=2&tag=${tag}`)).body.meta.nextCursor;
    expect(cursor).to.be.a('string');
    const get = (path: string, rid: string, headers = '') =>
      srv.send(`GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${rid}\r\n${headers}Connection: close\r\n\r\n`);
    const rest = (text: string) => text.replace(/^(X-Request-Id|Date): .*\r\n/gm, '');
    const paths = [
      '/api/v1/feed',
      '/api/v1/feed?',
      `/api/v1/feed?sort=new&limit=2&tag=${tag}`,
      `/api/v1/feed?sort=new&limit=2&tag=${tag.toUpperCase()}&`,
      `/api/v1/feed?sort=new&limit=2&tag=${tag}&cursor=${cursor}`,
      `/api/v1/feed?sort=top&tag=${tag}&community=general&author=%40${author.handle}`,
      `/API/V1/FEED/?sort=hot&limit=1&scope=all&tag=${tag}`,
      '/api/v1/feed?sort=new&sort=hot',
      '/api/v1/feed?limit=0',
      '/api/v1/feed?limit=2+',
      '/api/v1/feed?sort=new&cursor=bm90LWEtY3Vyc29y',
      '/api/v1/feed?tag=Not%20A%20Tag',
      '/api/v1/feed?tag=%E2%82%AC',
      '/api/v1/feed?__proto__=x&constructor=y',
      '/api/v1/feed?scope=following',
    ];
    try {
      // With the response cache on: the direct path stores what the full path would.
      deps.caches.setTtl('feed', 60_000);
      for (const [i, path] of paths.entries()) {
        deps.caches.feed.invalidate();
        const before = contexts();
        const direct = await get(path, `direct-feed-${i}`);
        expect(contexts(), `${path}: answered before Koa`).to.equal(before);
        const stored = deps.caches.responses.lookup(path, deps.now().getTime());
        deps.caches.feed.invalidate();
        // A cookie that is no session makes the request not anonymous: the full path, same answer.
        const full = await get(path, `full-feed-${i}`, 'Cookie: other=1\r\n');
        expect(contexts(), `${path}: answered by Koa`).to.equal(before + 1);
        expect(direct.text, path).to.match(/^HTTP\/1\.1 (200|400|401) /);
        expect(rest(direct.text), path).to.equal(rest(full.text));
        expect(/^X-Request-Id: (.*)\r$/m.exec(direct.text)?.[1]).to.equal(`direct-feed-${i}`);
        if (/^HTTP\/1\.1 200 /.test(direct.text)) expect(stored?.toString(), path).to.equal(envelopeText(direct.text));
        else expect(stored, path).to.equal(undefined);
      }
      expect(envelopeOf((await get(paths[2], 'direct-feed-body')).text).data.map((p: any) => p.title)).to.deep.equal([
        'feed "2" é 🙂',
        'feed "1" é 🙂',
      ]);
      expect(envelopeOf((await get(paths[4], 'direct-feed-cursor')).text).data.map((p: any) => p.title)).to.deep.equal([
        'feed "0" é 🙂',
      ]);
      expect(envelopeOf((await get(paths.at(-1)!, 'direct-feed-401')).text).error.code).to.equal('UNAUTHORIZED');
      await new Promise((r) => setTimeout(r, 50));
      const access = srv.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
      const line = (rid: string) => {
        const l = access.find((a) => a.requestId === rid);
        return l && { method: l.method, path: l.path, status: l.status };
      };
      for (const i of paths.keys()) {
        expect(line(`direct-feed-${i}`)).to.not.equal(undefined);
        expect(line(`direct-feed-${i}`)).to.deep.equal(line(`full-feed-${i}`));
      }
    } finally {
      deps.caches.setTtl('feed', null);
      await srv.close();
    }
  });

  it("what Node's HTTP parser refuses is answered in the envelope, and no log line carries the request's bytes (its API key or cookie)", async () => {
    const srv = await serverWithLog(5000);
    const secrets = 'Authorization: Bearer svc_live_SECRETKEY123\r\nCookie: svc_session=SECRETSESSION\r\n';
    try {
      const cases: [string, number, string][] = [
        // A chunk size that is not hex, once the request has reached the app.
        [
          `POST /api/v1/posts HTTP/1.1\r\nHost: x\r\n${secrets}Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`,
          400,
          'BAD_REQUEST',
        ],
        [
          `POST /api/v1/posts HTTP/1.1\r\nHost: x\r\n${secrets}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
          400,
          'BAD_REQUEST',
        ],
        [`GET /api/v1/feed HTTP/1.1\r\nHost: x\r\n${secrets}X-Bad: a\x01b\r\n\r\n`, 400, 'BAD_REQUEST'],
        [`FOO /api/v1/feed HTTP/1.1\r\nHost: x\r\n${secrets}\r\n`, 400, 'BAD_REQUEST'],
        [
          `GET /api/v1/feed HTTP/1.1\r\nHost: x\r\n${secrets}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          431,
          'REQUEST_HEADER_FIELDS_TOO_LARGE',
        ],
      ];
      for (const [bytes, status, code] of cases) {
        const { text } = await srv.send(bytes);
        const what = bytes.slice(0, 40);
        expect(text, what).to.match(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(text, what).to.match(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
        expect(envelopeOf(text).error.code, what).to.equal(code);
      }
      await new Promise((r) => setTimeout(r, 100));
      const all = srv.lines.join('');
      expect(all).not.to.include('SECRET');
      expect(srv.lines.map((l) => JSON.parse(l)).filter((l) => l.level >= 50)).to.deep.equal([]);
    } finally {
      await srv.close();
    }
  });

  it('TRACE or PROPFIND on a known API path is 405 METHOD_NOT_ALLOWED with Allow, not 501', async () => {
    const ctx = await getContext();
    for (const m of ['TRACE', 'PROPFIND']) {
      const r = await rawRequest(ctx.baseUrl, { method: m, path: '/api/v1/feed' });
      expect(r.status, m).to.equal(405);
      expect(r.body.error.code, m).to.equal('METHOD_NOT_ALLOWED');
      expect(r.headers.allow, m).to.include('GET');
    }
  });

  it('bodies over 64 KiB are 413 PAYLOAD_TOO_LARGE', async () => {
    const a = await newAgent();
    const r = await api('POST', '/posts', { key: a.key, raw: JSON.stringify({ body: 'x'.repeat(70 * 1024) }) });
    expect(r.status).to.equal(413);
    expect(r.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('discovery manifest is built from PUBLIC_URL', async () => {
    const ctx = await getContext();
    const r = await api('GET', '/.well-known/svc.json');
    expect(r.status).to.equal(200);
    expect(r.body.name).to.equal('svc');
    expect(r.body.apiBase).to.equal(ctx.baseUrl + '/api');
    expect(r.body.api.v1.base_url).to.equal(ctx.baseUrl + '/api/v1');
    expect(r.body.api.v1.openapi_spec).to.equal(ctx.baseUrl + '/api/v1/openapi.json');
    expect(r.body.supportedScopes).to.deep.equal(['read', 'post', 'comment', 'vote', 'react', 'follow']);
    expect(r.body.platforms).to.include.members(['mcp', 'bot', 'langchain', 'openclaw']);
  });

  it('OpenAPI document is valid 3.1 and lists exactly the registered routes', async () => {
    const r = await api('GET', '/openapi.json');
    expect(r.status).to.equal(200);
    expect(r.body.openapi).to.equal('3.1.0');
    expect(r.body.info.version).to.equal('1.0.0');
    await SwaggerParser.validate(JSON.parse(JSON.stringify(r.body)));
    const documented = new Set<string>();
    for (const [p, ops] of Object.entries<any>(r.body.paths))
      for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${p}`);
    const registered = new Set(
      apiRoutes().map((rt) => `${rt.method.toUpperCase()} ${fullPath(rt).replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`),
    );
    expect([...documented].sort()).to.deep.equal([...registered].sort());
    const ctx = await getContext();
    const stack = (ctx.server.listeners('request')[0] as any) ? true : false;
    expect(stack).to.equal(true);
  });

  it('OpenAPI: the comment tree is recursive (CommentNode), and a real three-level tree validates against it', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(doc.components.schemas.CommentNode.properties.replies.items).to.deep.equal({
      $ref: '#/components/schemas/CommentNode',
    });
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const postId = (await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'thread' } }))
      .body.data.id;
    let parentId: string | null = null;
    for (const who of [a, b, c]) {
      const r = await api('POST', `/posts/${postId}/comments`, { key: who.key, body: { body: 'level', parentId } });
      expect(r.status, r.text).to.equal(201);
      parentId = r.body.data.id;
    }
    const tree = await api('GET', `/posts/${postId}/comments`);
    expect(tree.body.data[0].replies[0].replies[0].id).to.equal(parentId);
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const schema = JSON.parse(
      JSON.stringify(
        doc.paths['/api/v1/posts/{id}/comments'].get.responses['200'].content['application/json'].schema,
      ).replace(/"#\/components/g, '"doc#/components'),
    );
    const validate = ajv.compile(schema);
    expect(validate(tree.body), JSON.stringify(validate.errors)).to.equal(true);
    // It checks the nested levels too: a malformed reply two levels down is refused.
    const broken = JSON.parse(JSON.stringify(tree.body));
    broken.data[0].replies[0].replies[0].score = 'high';
    expect(validate(broken)).to.equal(false);
  });

  it('an enum refusal lists the allowed values in its details (query and body)', async () => {
    const feed = await api('GET', '/feed?sort=best');
    expect([feed.status, feed.body.error.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    expect(feed.body.error.details).to.deep.equal([{ path: 'query/sort', message: 'must be one of: hot, new, top' }]);
    const exchange = await api('POST', '/connect/exchange', {
      body: { connectKey: 'svc_connect_x', framework: 'nope', localAgentId: 'a' },
    });
    expect(exchange.status).to.equal(400);
    expect(exchange.body.error.details).to.deep.include({
      path: 'body/framework',
      message: 'must be one of: mcp, bot, langchain, openclaw',
    });
  });

  it('OpenAPI: optional bodies, Retry-After on every 429, leaderboard category and week rules', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    // Bodies without a required field may be left out (follow with a key, connect keys).
    expect(doc.paths['/api/v1/agents/{handle}/follow'].post.requestBody.required).to.equal(false);
    expect(doc.paths['/api/v1/agents/{handle}/follow'].delete.requestBody.required).to.equal(false);
    expect(doc.paths['/api/v1/connect/keys'].post.requestBody.required).to.equal(false);
    expect(doc.paths['/api/v1/posts'].post.requestBody.required).to.equal(true);
    let limited = 0;
    for (const [p, ops] of Object.entries<any>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(ops)) {
        if (!op.responses['429']) continue;
        limited++;
        expect(op.responses['429'].headers?.['Retry-After']?.schema, `${m} ${p}`).to.deep.equal({
          type: 'integer',
          minimum: 1,
        });
        // Writes fail closed: every limited write names the code.
        if (m !== 'get') expect(op.responses['429'].description, `${m} ${p}`).to.include('RATE_LIMITER_UNAVAILABLE');
      }
    }
    expect(limited).to.be.greaterThan(10);
    const params = doc.paths['/api/v1/leaderboards'].get.parameters;
    const category = params.find((x: any) => x.name === 'category').schema;
    expect(category.enum).to.deep.equal(['overall', 'helpful', 'funny', 'debater', 'rising', 'savage']);
    expect(category.default).to.equal('overall');
    expect(params.find((x: any) => x.name === 'week').schema.pattern).to.equal('^[0-9]{4}-W[0-9]{2}$');
    expect(JSON.stringify(doc)).not.to.include('x-doc');
    // Documented, not validated: the handler still answers the contract's own codes.
    const bad = await api('GET', '/leaderboards?category=nope');
    expect([bad.status, bad.body.error.code]).to.deep.equal([400, 'INVALID_CATEGORY']);
    const week = await api('GET', '/leaderboards?week=2026-48');
    expect([week.status, week.body.error.code]).to.deep.equal([400, 'INVALID_WEEK']);
  });

  it('OpenAPI: every rate-limited route documents its 429 (the connect endpoints can return 429)', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const limitedRoutes = apiRoutes().filter((rt) => rt.rateLimit);
    expect(limitedRoutes.map((rt) => `${rt.method} ${rt.path}`)).to.include.members([
      'post /connect/keys',
      'post /connect/exchange',
    ]);
    for (const rt of limitedRoutes) {
      const op = doc.paths[fullPath(rt).replace(/:([A-Za-z0-9_]+)/g, '{$1}')][rt.method];
      expect(op.responses['429'], `${rt.method} ${rt.path}`).to.not.equal(undefined);
      expect(op.responses['429'].headers['Retry-After'], `${rt.method} ${rt.path}`).to.not.equal(undefined);
    }
    const exchange = doc.paths['/api/v1/connect/exchange'].post.responses;
    expect(exchange['429'].description).to.include('RATE_LIMITED').and.to.include('RATE_LIMITER_UNAVAILABLE');
    // The success carries the quota fields the server sends.
    expect(exchange['200'].headers).to.have.keys('RateLimit', 'RateLimit-Policy');
    expect(exchange['409'].description).to.include('CONNECT_KEY_EXHAUSTED').and.to.include('AGENT_ALREADY_OWNED');
  });

  it('OpenAPI: what a generated client needs (CSRF header, optional session, every error, quota and replay headers)', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const op = (m: string, p: string) => doc.paths[`/api/v1${p}`][m];
    expect(doc.components.securitySchemes.csrfToken).to.include({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' });
    // Session writes need the header with the cookie; session reads do not; a key never does.
    expect(op('post', '/owner/agents/{id}/webhooks').security).to.deep.equal([{ sessionCookie: [], csrfToken: [] }]);
    expect(op('get', '/notifications').security).to.deep.equal([{ sessionCookie: [] }]);
    expect(op('post', '/posts/{id}/vote').security).to.deep.equal([
      { bearerAuth: [] },
      { sessionCookie: [], csrfToken: [] },
    ]);
    expect(op('post', '/connect/keys').security).to.deep.equal([{}, { sessionCookie: [], csrfToken: [] }]);
    expect(op('get', '/feed').security).to.deep.equal([]);
    // Every operation documents the errors it shares with all (413, 415, 405...) as default.
    for (const [p, ops] of Object.entries<any>(doc.paths))
      for (const [m, o] of Object.entries<any>(ops))
        expect(o.responses.default?.content, `${m} ${p}`).to.not.equal(undefined);
    // Another owner's agent is 403 NOT_AGENT_OWNER, and the document says so.
    expect(op('get', '/owner/agents/{id}/keys').responses['403'].description).to.include('NOT_AGENT_OWNER');
    expect(op('patch', '/owner/agents/{id}/webhooks/{webhookId}').responses['403'].description).to.include(
      'NOT_AGENT_OWNER',
    );
    // Quota fields on the success of limited routes, the replay marker where keys apply, the cookie on login.
    expect(op('post', '/posts').responses['201'].headers).to.have.keys(
      'RateLimit',
      'RateLimit-Policy',
      'Idempotent-Replayed',
    );
    expect(op('post', '/owner/login').responses['200'].headers).to.have.property('Set-Cookie');
    expect(op('post', '/posts').parameters.find((x: any) => x.name === 'Idempotency-Key').schema.pattern).to.equal(
      '^[\\x21-\\x7e]{1,255}$',
    );
    // One of two shapes: a body is required.
    expect(op('post', '/notifications/read').requestBody.required).to.equal(true);
    // Rules stated as patterns are the ones the server applies. A tag's pattern applies after
    // lowercasing, which no schema pattern can say: the document states it in words.
    const handle = op('post', '/owner/agents').requestBody.content['application/json'].schema.properties.handle.pattern;
    expect(handle).to.equal('^@?[A-Za-z0-9_]{3,30}$');
    const tags = op('post', '/posts').requestBody.content['application/json'].schema.properties.tags;
    expect(tags.items).to.deep.equal({ type: 'string', minLength: 1, maxLength: 32 });
    expect(tags.description).to.include('lowercased, then each must match ^[a-z0-9][a-z0-9-]{0,31}$');
    expect(op('get', '/feed').parameters.find((x: any) => x.name === 'tag').schema.description).to.equal(
      'Lowercased, then must match ^[a-z0-9][a-z0-9-]{0,31}$',
    );
  });
});

describe('GET /me', () => {
  it('returns agent, key prefix and scopes, ownerBound and the rate-limit policy', async () => {
    const a = await newAgent({ scopes: ['read', 'post'] });
    const r = await api('GET', '/me', { key: a.key });
    expect(r.status).to.equal(200);
    expect(r.body.data.agent).to.deep.equal({
      id: a.agent.id,
      handle: '@' + a.handle,
      displayName: 'Agent',
      status: 'active',
    });
    expect(r.body.data.apiKey.keyPrefix).to.match(/^svc_live_/);
    expect(a.key.startsWith(r.body.data.apiKey.keyPrefix)).to.equal(true);
    expect(r.body.data.apiKey.scopes).to.deep.equal(['read', 'post']);
    expect(r.body.data.ownerBound).to.equal(false);
    expect(r.body.data.rateLimit).to.deep.equal({
      postLimitPerMinute: 10,
      postMinIntervalSeconds: 3,
      commentLimitPerMinute: 30,
      commentMinIntervalSeconds: 2,
      threadCommentMinIntervalSeconds: 15,
      voteLimitPerMinute: 60,
      reactLimitPerMinute: 60,
      followLimitPerMinute: 30,
      editLimitPerMinute: 20,
      retryAfterHeader: true,
    });
  });

  it('401 UNAUTHORIZED without a key, INVALID_API_KEY for a bad or revoked one', async () => {
    expect((await api('GET', '/me')).body.error.code).to.equal('UNAUTHORIZED');
    const bad = await api('GET', '/me', { key: 'svc_live_' + 'x'.repeat(43) });
    expect(bad.status).to.equal(401);
    expect(bad.body.error.code).to.equal('INVALID_API_KEY');
    const a = await newAgent();
    const { db } = await getContext();
    await db('api_keys').where({ agent_id: a.agent.id }).update({ revoked_at: db.fn.now() });
    await (await getContext()).deps.caches.changed({ kind: 'api-keys' });
    const revoked = await api('GET', '/me', { key: a.key });
    expect(revoked.status).to.equal(401);
    expect(revoked.body.error.code).to.equal('INVALID_API_KEY');
  });

  it("OpenAPI: the 200 of GET /me requires every field GET /me promises, rateLimit's nine included (and the added edit limit)", async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const data = doc.paths['/api/v1/me'].get.responses['200'].content['application/json'].schema.properties.data;
    expect(data.required).to.have.members(['agent', 'apiKey', 'ownerBound', 'rateLimit']);
    expect(data.properties.agent.required).to.have.members(['id', 'handle', 'displayName', 'status']);
    expect(data.properties.apiKey.required).to.have.members(['keyPrefix', 'scopes']);
    const rateLimit = data.properties.rateLimit;
    const fields = [
      'postLimitPerMinute',
      'postMinIntervalSeconds',
      'commentLimitPerMinute',
      'commentMinIntervalSeconds',
      'threadCommentMinIntervalSeconds',
      'voteLimitPerMinute',
      'reactLimitPerMinute',
      'followLimitPerMinute',
      'editLimitPerMinute',
      'retryAfterHeader',
    ];
    expect(Object.keys(rateLimit.properties)).to.have.members(fields);
    expect(rateLimit.required ?? []).to.have.members(fields);
    expect(rateLimit.properties.retryAfterHeader.type).to.equal('boolean');
  });

  it('403 INSUFFICIENT_SCOPE without read', async () => {
    const a = await newAgent({ scopes: ['post'] });
    const r = await api('GET', '/me', { key: a.key });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('INSUFFICIENT_SCOPE');
  });

  it('stores only a SHA-256 of the key', async () => {
    const a = await newAgent();
    const { db } = await getContext();
    const rows = await db('api_keys').where({ agent_id: a.agent.id });
    expect(JSON.stringify(rows)).not.to.contain(a.key.slice(9));
  });
});

describe('route rate limits', () => {
  it('a search made with an API key also counts against the agent read limit', async () => {
    const ctx = await getContext();
    // A private minute far from other tests' windows (the limiter clock follows deps.now()).
    ctx.setNow(new Date('2040-01-06T10:00:00Z'));
    try {
      const a = await newAgent();
      for (let i = 0; i < 120; i++) expect((await api('GET', '/me', { key: a.key })).status).to.equal(200);
      const r = await api('GET', '/discovery/search?q=hello', { key: a.key });
      expect(r.status).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITED');
      expect(r.headers.get('retry-after')).to.equal(String(r.body.error.retryAfterSeconds));
      const anon = await api('GET', '/discovery/search?q=hello');
      expect(anon.status).to.equal(200);
    } finally {
      ctx.setNow(null);
    }
  });
});
