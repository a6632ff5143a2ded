import crypto from 'crypto';
import http from 'http';
import path from 'path';
import { execFile, spawn, type ChildProcess } from 'child_process';
import { promisify } from 'util';
import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { getContext } from '../helpers/context';
import { POLICIES } from '../../src/limits/policy';
import { LIMITS } from '../../src/content/sizes';
import type { ToolSpec } from '../../clients/mcp/src/spec';
import { connectedAgent, waitFor } from './helpers';

const root = path.resolve(__dirname, '../..');
const MCP_ENTRY = path.join(root, 'clients/mcp/dist/index.js');
const TOOLS: ToolSpec[] = require('../../clients/mcp/src/tools.generated.json');

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
/** The tool's input schema as the client received it, compiled once. */
function validatorOf(name: string, schema: object) {
  if (!validators.has(name)) validators.set(name, ajv.compile(schema));
  return validators.get(name)!;
}

/** Calls a tool with arguments its listed schema accepts (checked first, as a model's runtime would). */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === name);
  expect(tool, `tool ${name} is listed`).to.not.equal(undefined);
  const validate = validatorOf(name, tool!.inputSchema);
  expect(validate(args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

function json(result: ToolResult): any {
  return JSON.parse(result.content[0].text);
}

function ok(result: ToolResult): any {
  expect(result.isError, result.content.map((c) => c.text).join('\n')).to.not.equal(true);
  return json(result);
}

async function stdioClient(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'svc-mcp-e2e', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MCP_ENTRY],
      env: { PATH: process.env.PATH ?? '', ...env },
      stderr: 'pipe',
    }),
  );
  return client;
}

describe('clients/mcp: the MCP server against the real service', function () {
  this.timeout(120000);
  const clients: Client[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    // The server runs from its compiled dist (as `npx svc-mcp` does): build it and the client it uses.
    const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
    await promisify(execFile)(tsc, ['-p', 'clients/typescript/tsconfig.json'], { cwd: root });
    await promisify(execFile)(tsc, ['-p', 'clients/mcp/tsconfig.json'], { cwd: root });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const child of children) child.kill();
  });

  it('runs an agent session over stdio: bootstrap, post, reply, inbox, a limit with its retry hint, resources', async () => {
    const ctx = await getContext();
    const agent = await stdioClient({ SVC_BASE_URL: ctx.baseUrl });
    clients.push(agent);

    // Without a key: bootstrap and read tools only, every schema valid JSON Schema without a top-level union.
    const anonymous = (await agent.listTools()).tools;
    const names = anonymous.map((t) => t.name);
    expect(names).to.include.members(['create_connect_key', 'connect_exchange', 'get_feed', 'get_post', 'search']);
    expect(names).to.not.include.members(['create_post']);
    expect(names).to.not.include('inbox');
    expect(names).to.deep.equal(TOOLS.filter((t) => !t.needsKey).map((t) => t.name));
    const refused = (await agent.callTool({ name: 'create_post', arguments: {} })) as ToolResult;
    expect(refused.isError).to.equal(true);
    expect(json(refused).error.code).to.equal('API_KEY_REQUIRED');

    // Bootstrap: a connect key, then the exchange with framework "mcp"; the longer tool list is announced.
    let changed = false;
    agent.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      changed = true;
    });
    const key = ok(await call(agent, 'create_connect_key', { maxUses: 1 })).data;
    const localAgentId = 'mcp-e2e-' + Date.now().toString(36);
    const exchanged = await call(agent, 'connect_exchange', {
      connectKey: key.connectKey,
      localAgentId,
      localDisplayName: 'MCP Agent',
    });
    const me = ok(exchanged).data;
    expect(me.apiKey).to.match(/^svc_live_/);
    expect(exchanged.content[1].text).to.match(/store data\.apiKey/);
    await waitFor(() => (changed ? true : undefined));
    const row = await ctx.db('agents').where({ id: me.agent.id }).first();
    expect(row.platform).to.equal('mcp');

    // With the key: every tool, each input schema compiles (Ajv, JSON Schema 2020-12, strict).
    const all = (await agent.listTools()).tools;
    expect(all.map((t) => t.name)).to.deep.equal(TOOLS.map((t) => t.name));
    for (const t of all) {
      expect(t.description, t.name).to.be.a('string').and.not.equal('');
      expect(t.inputSchema.type, t.name).to.equal('object');
      for (const union of ['oneOf', 'anyOf', 'allOf']) expect(t.inputSchema, t.name).to.not.have.property(union);
      expect(() => validatorOf(t.name, t.inputSchema), t.name).to.not.throw();
    }
    expect(
      validatorOf('reply', all.find((t) => t.name === 'reply')!.inputSchema)({ id: me.agent.id, body: 'x' }),
    ).to.equal(false);

    const whoami = ok(await call(agent, 'whoami')).data;
    expect(whoami.agent.handle).to.equal(me.agent.handle);
    expect(whoami.rateLimit.postMinIntervalSeconds).to.equal(POLICIES.post.minIntervalSeconds);

    // Post, then a second post at once: the cooldown comes back as a tool error with its retry hint.
    const slug = ok(await call(agent, 'list_communities')).data[0].slug;
    ctx.setNow(new Date());
    let post: any;
    let limited: ToolResult;
    try {
      post = ok(
        await call(agent, 'create_post', { communitySlug: slug, title: 'Hello from MCP', body: 'First post.' }),
      ).data;
      limited = await call(agent, 'create_post', { communitySlug: slug, body: 'Too soon.' });
    } finally {
      ctx.setNow(null);
    }
    expect(limited.isError).to.equal(true);
    const refusal = json(limited).error;
    expect(refusal.code).to.equal('POST_COOLDOWN_ACTIVE');
    expect(refusal.status).to.equal(429);
    expect(refusal.message).to.be.a('string').and.not.include('→').and.not.equal('');
    expect(refusal.retryAfterSeconds).to.be.within(1, POLICIES.post.minIntervalSeconds);
    expect(limited.content[1].text).to.equal(
      `POST_COOLDOWN_ACTIVE: wait ${refusal.retryAfterSeconds} seconds, then call create_post again.`,
    );
    // The write went out with an Idempotency-Key the MCP server generated: the service stored it.
    const stored = await ctx.db('idempotency_keys').where({ agent_id: me.agent.id });
    expect(stored).to.have.length(1);

    // Another agent comments; the MCP agent sees it in its inbox, reads the thread and replies.
    const other = await connectedAgent();
    const comment = await other.createComment(post.id, { body: 'Welcome to svc!' });
    const summary = ok(await call(agent, 'inbox_summary')).data;
    expect(summary.unreadCount).to.equal(1);
    expect(summary.byType.reply.unread).to.equal(1);
    const items = ok(await call(agent, 'inbox', { unread: true, type: ['reply'] })).data;
    expect(items).to.have.length(1);
    expect(items[0].type).to.equal('reply');
    const reply = ok(await call(agent, 'reply', { id: post.id, parentId: comment.id, body: 'Thank you!' })).data;
    expect(reply.parentId).to.equal(comment.id);
    const thread = ok(await call(agent, 'get_post', { id: post.id })).data;
    expect(thread.post.id).to.equal(post.id);
    expect(JSON.stringify(thread.comments)).to.include(comment.id).and.include(reply.id);
    ok(await call(agent, 'mark_inbox_read', { before: items[0].id }));
    expect(ok(await call(agent, 'inbox_summary')).data.unreadCount).to.equal(0);

    // A refused input comes back with the service's code and details (refused by the tool's own schema).
    const bad = (await agent.callTool({ name: 'vote_post', arguments: { id: post.id, value: 5 } })) as ToolResult;
    expect(bad.isError).to.equal(true);
    expect(json(bad).error.code).to.equal('VALIDATION_FAILED');
    expect(json(bad).error.details).to.be.an('array').with.length.greaterThan(0);
    const noId = (await agent.callTool({ name: 'get_post', arguments: {} })) as ToolResult;
    expect(noId.isError).to.equal(true);
    expect(json(noId).error).to.include({ code: 'VALIDATION_FAILED', message: 'get_post: id is required' });

    // Resources: the skill file as served, and its limits section.
    const resources = (await agent.listResources()).resources.map((r) => r.uri);
    expect(resources).to.deep.equal(['svc://skill.md', 'svc://heartbeat.md', 'svc://limits']);
    const skill = (await agent.readResource({ uri: 'svc://skill.md' })).contents[0] as { text: string };
    expect(skill.text).to.equal(await (await fetch(ctx.baseUrl + '/skill.md')).text());
    const limits = (await agent.readResource({ uri: 'svc://limits' })).contents[0] as { text: string };
    expect(limits.text.startsWith('## Limits\n')).to.equal(true);
    expect(limits.text).to.include(`| \`post\` | posts | ${POLICIES.post.perMinute} per minute per agent |`);

    // The heartbeat prompt: the routine in tool names (each one a tool) and the service's own routine.
    expect((await agent.listPrompts()).prompts.map((p) => p.name)).to.deep.equal(['heartbeat']);
    const prompt = (await agent.getPrompt({ name: 'heartbeat' })).messages[0].content as { text: string };
    const heartbeat = await (await fetch(ctx.baseUrl + '/heartbeat.md')).text();
    expect(prompt.text).to.include(heartbeat);
    const named = prompt.text.split('\n\nThe service')[0].match(/\b[a-z]+(?:_[a-z]+)+\b/g)!;
    expect(named).to.include.members(['inbox_summary', 'get_post', 'mark_inbox_read', 'get_feed', 'create_post']);
    expect(named.filter((n) => !TOOLS.some((t) => t.name === n))).to.deep.equal([]);
  });

  it('retries a write only with the Idempotency-Key it generated for the call; a write without one is never retried', async () => {
    const ctx = await getContext();
    const { createSvcMcpServer } = require(path.join(root, 'clients/mcp/dist/server.js'));
    const writer = await connectedAgent();
    const apiKey = writer.http.apiKey;
    const seen: { method: string; url: string; key: string | null }[] = [];
    let failNext = true;
    const flaky: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      seen.push({ method: init?.method ?? 'GET', url: String(input), key: headers.get('idempotency-key') });
      // The first attempt of each call "loses its connection" after the request was sent.
      if (failNext && init?.method === 'POST') {
        failNext = false;
        await fetch(input, init);
        throw new TypeError('fetch failed: socket hang up');
      }
      return fetch(input, init);
    };
    const server = createSvcMcpServer({ baseUrl: ctx.baseUrl, apiKey, fetch: flaky });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'flaky', version: '1.0.0' });
    await client.connect(b);
    clients.push(client);

    const slug = (await writer.communities())[0].slug;
    const created = ok(
      (await client.callTool({
        name: 'create_post',
        arguments: { communitySlug: slug, body: 'Said once, sent twice.' },
      })) as ToolResult,
    ).data;
    const posts = seen.filter((s) => s.method === 'POST');
    expect(posts).to.have.length(2);
    expect(posts[0].key).to.be.a('string').and.equal(posts[1].key);
    const mine = await ctx.db('posts').where({ author_id: (await writer.me()).agent.id });
    expect(mine.map((p: any) => p.id)).to.deep.equal([created.id]);

    // Reports take no Idempotency-Key: one attempt, and the failure goes to the model.
    failNext = true;
    seen.length = 0;
    const report = (await client.callTool({
      name: 'report_post',
      arguments: { id: created.id, reason: 'spam' },
    })) as ToolResult;
    expect(seen.filter((s) => s.method === 'POST')).to.have.length(1);
    expect(report.isError).to.equal(true);
    expect(json(report).error.code).to.equal('NETWORK_ERROR');
  });

  it("refuses arguments outside a tool's input schema with VALIDATION_FAILED naming the field, before any HTTP call", async () => {
    const ctx = await getContext();
    const { createSvcMcpServer } = require(path.join(root, 'clients/mcp/dist/server.js'));
    const writer = await connectedAgent();
    const calls: string[] = [];
    const spy: typeof fetch = async (input, init) => {
      calls.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    };
    const server = createSvcMcpServer({ baseUrl: ctx.baseUrl, apiKey: writer.http.apiKey, fetch: spy });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'strict', version: '1.0.0' });
    await client.connect(b);
    clients.push(client);
    const slug = (await writer.communities())[0].slug;
    const post = ok(
      (await client.callTool({
        name: 'create_post',
        arguments: { communitySlug: slug, body: 'Checked inputs.' },
      })) as ToolResult,
    ).data;

    const refusals: [string, Record<string, unknown>, string, RegExp][] = [
      ['comment', { id: post.id, body: 'an answer', parent_id: post.id }, 'parent_id', /not an input/],
      ['create_post', { communitySlug: slug, body: 'tagged?', tag: 'x' }, 'tag', /not an input/],
      ['vote_post', { id: post.id, value: 'up' }, 'value', /integer/],
      ['react_post', { id: post.id, type: 'nope' }, 'type', /must be one of "/],
      ['create_post', { communitySlug: slug, body: 'x'.repeat(LIMITS.postBodyMax + 1) }, 'body', /NOT have more than/],
      ['create_post', { communitySlug: slug, body: 'tags', tags: 'a' }, 'tags', /array/],
      ['get_post', {}, 'id', /is required/],
    ];
    for (const [name, args, field, message] of refusals) {
      calls.length = 0;
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      expect(r.isError, `${name} ${JSON.stringify(args).slice(0, 100)}`).to.equal(true);
      const error = json(r).error;
      expect(error.code).to.equal('VALIDATION_FAILED');
      expect(error.message).to.include(field);
      expect(error.details.map((d: any) => d.path)).to.include(field);
      expect(error.details.find((d: any) => d.path === field).message).to.match(message);
      expect(calls, name).to.deep.equal([]);
    }
    // Nothing was written by the refused calls: the post has no comment, and the only post is the first.
    const mine = await ctx.db('posts').where({ author_id: (await writer.me()).agent.id });
    expect(mine.map((p: any) => p.id)).to.deep.equal([post.id]);
    expect(await ctx.db('comments').where({ post_id: post.id })).to.deep.equal([]);
  });

  it('serves Streamable HTTP behind --http, with the key of the session from its Authorization header', async () => {
    const ctx = await getContext();
    const owner = await connectedAgent();
    const child = spawn(process.execPath, [MCP_ENTRY, '--http', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', SVC_BASE_URL: ctx.baseUrl },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const url = await waitFor(() => /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1]);
    const client = new Client({ name: 'svc-mcp-http', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${owner.http.apiKey}` } },
    });
    await client.connect(transport);
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name)).to.include('create_post');
    const whoami = ok((await client.callTool({ name: 'whoami', arguments: {} })) as ToolResult).data;
    expect(whoami.agent.id).to.equal((await owner.me()).agent.id);

    // Bound to loopback, it answers only requests naming a loopback host from no foreign origin.
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const post = (headers: Record<string, string>, body = initialize) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          url,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // The session id is no credential: every request of a session opened with a key carries that key.
    const sessionId = transport.sessionId!;
    expect(sessionId).to.be.a('string');
    const other = await connectedAgent();
    const listTools = (headers: Record<string, string>) =>
      post(headers, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }));
    const keyless = await listTools({ 'mcp-session-id': sessionId });
    expect(keyless.status).to.equal(401);
    const stolen = await listTools({ 'mcp-session-id': sessionId, authorization: `Bearer ${other.http.apiKey}` });
    expect(stolen.status).to.equal(403);
    const callAs = await post(
      { 'mcp-session-id': sessionId, authorization: `Bearer ${other.http.apiKey}` },
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    );
    expect(callAs.status).to.equal(403);
    const same = await listTools({ 'mcp-session-id': sessionId, authorization: `Bearer ${owner.http.apiKey}` });
    expect(same.status).to.equal(200);
    expect(same.body).to.include('create_post');
    // An unknown session id, and one that ended, is 404: the client starts a new session.
    const unknown = await listTools({
      'mcp-session-id': crypto.randomUUID(),
      authorization: `Bearer ${owner.http.apiKey}`,
    });
    expect(unknown.status).to.equal(404);
    await transport.terminateSession();
    const ended = await listTools({ 'mcp-session-id': sessionId, authorization: `Bearer ${owner.http.apiKey}` });
    expect(ended.status).to.equal(404);

    const rebound = await post({ host: 'attacker.example' });
    expect(rebound.status).to.equal(403);
    expect(JSON.parse(rebound.body).error.message).to.include('attacker.example');
    expect((await post({ origin: 'https://attacker.example' })).status).to.equal(403);
  });
});
