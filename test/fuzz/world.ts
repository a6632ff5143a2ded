import http from 'http';
import crypto from 'crypto';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent, newOwner, uniq, TestAgent, TestOwner } from '../helpers/factories';
import { createCommunity } from '../../src/communities/service';
import { issueApiKey } from '../../src/identity/service';
import { fullPath } from '../../src/http/openapi';
import type { RouteDef } from '../../src/http/route';

/**
 * Real resources a route's path parameters and bodies can name, so generated requests get past
 * "not found" into validation and handlers. One world per route: a route that deletes or revokes
 * its fixture cannot starve another route.
 */
export interface World {
  community: string;
  owner: TestOwner;
  /** Agents of `owner`, all scopes (rate limits are per agent: several keep coverage). */
  mine: TestAgent[];
  /** An agent of another owner, author of `post` and `comment`. */
  other: TestAgent;
  otherOwner: TestOwner;
  /** An unowned agent (claim-token route). */
  unowned: TestAgent;
  post: string;
  comment: string;
  myPost: string;
  myComment: string;
  webhookId: string | null;
  webhookSecret: string | null;
  connectKeyId: string | null;
  connectKey: string | null;
  apiKeyId: string;
  claimToken: string | null;
  /** An accepted conversation requested by mine[0] of `other`, and its first message (by mine[0]). */
  conversation: string;
  conversationMessage: string;
}

export async function ensureCommunity(): Promise<string> {
  const { db } = await getContext();
  const slug = 'fuzz-' + crypto.randomBytes(4).toString('hex');
  await createCommunity(db, { slug, name: 'Fuzz', description: 'fuzz fixtures' });
  return slug;
}

export async function buildWorld(community: string, agents = 4): Promise<World> {
  const { db } = await getContext();
  const owner = await newOwner({ verified: true });
  const otherOwner = await newOwner();
  const mine: TestAgent[] = [];
  for (let i = 0; i < agents; i++) mine.push(await newAgent({ owner }));
  const other = await newAgent({ owner: otherOwner });
  const unowned = await newAgent({ owner: null });
  const mk = async (a: TestAgent) => {
    const p = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: community, title: 'fixture', body: 'fixture post @' + a.handle, tags: ['fuzz'] },
    });
    if (p.status !== 201) throw new Error(`fixture post failed: ${p.status} ${p.text}`);
    const c = await api('POST', `/posts/${p.body.data.id}/comments`, { key: a.key, body: { body: 'fixture comment' } });
    if (c.status !== 201) throw new Error(`fixture comment failed: ${c.status} ${c.text}`);
    return { post: p.body.data.id as string, comment: c.body.data.id as string };
  };
  const theirs = await mk(other);
  const ours = await mk(mine[0]);
  const wh = await api('POST', `/owner/agents/${mine[0].agent.id}/webhooks`, {
    session: owner.session,
    body: { url: 'http://127.0.0.1:9/hook' },
  });
  // Connect keys are limited per client address: each world asks from its own loopback address.
  const ck = await rawRequest((await getContext()).baseUrl, {
    method: 'POST',
    path: '/api/v1/connect/keys',
    headers: {
      'content-type': 'application/json',
      cookie: `svc_session=${owner.session.cookie}`,
      'x-csrf-token': owner.session.csrfToken,
    },
    body: JSON.stringify({ maxUses: 10, runtimeLabel: 'fuzz' }),
    localAddress: `127.0.${1 + crypto.randomInt(250)}.${1 + crypto.randomInt(250)}`,
  });
  const extraKey = await issueApiKey(db, mine[0].agent.id, ['read']);
  const ct = await api('POST', `/agents/${unowned.handle}/claim-token`, { key: unowned.key });
  const conv = await api('POST', '/conversations', {
    key: mine[0].key,
    body: { to: other.handle, message: 'fixture conversation' },
  });
  if (conv.status !== 201) throw new Error(`fixture conversation failed: ${conv.status} ${conv.text}`);
  await api('POST', `/conversations/${conv.body.data.id}/accept`, { key: other.key });
  const msg = await db('conversation_messages').where({ conversation_id: conv.body.data.id }).first('id');
  return {
    community,
    owner,
    mine,
    other,
    otherOwner,
    unowned,
    post: theirs.post,
    comment: theirs.comment,
    myPost: ours.post,
    myComment: ours.comment,
    webhookId: wh.status === 201 ? wh.body.data.id : null,
    webhookSecret: wh.status === 201 ? wh.body.data.secret : null,
    connectKeyId: ck.status === 201 ? ck.body.data.id : null,
    connectKey: ck.status === 201 ? ck.body.data.connectKey : null,
    apiKeyId: extraKey.id,
    claimToken: ct.status === 201 ? ct.body.data.claimToken : null,
    conversation: conv.body.data.id,
    conversationMessage: msg.id,
  };
}

/** The real value a path parameter should take for this route (its own resources). */
export function realParam(route: RouteDef, name: string, w: World): string {
  const p = route.path;
  if (name === 'handle') return p.includes('claim-token') ? w.unowned.handle : w.other.handle;
  if (name === 'slug') return w.community;
  if (name === 'webhookId') return w.webhookId ?? crypto.randomUUID();
  if (name === 'keyId') return w.apiKeyId;
  if (name === 'deliveryId') return crypto.randomUUID();
  if (name === 'messageId') return w.conversationMessage;
  if (name === 'id') {
    if (p.startsWith('/owner/agents/')) return w.mine[0].agent.id;
    if (p.startsWith('/owner/connect-keys/')) return w.connectKeyId ?? crypto.randomUUID();
    if (p.startsWith('/posts/')) return route.method === 'delete' ? w.myPost : w.post;
    if (p.startsWith('/comments/')) return route.method === 'delete' ? w.myComment : w.comment;
    if (p.startsWith('/conversations/')) return w.conversation;
  }
  return crypto.randomUUID();
}

/** Real values for body fields that name resources (acting agents, slugs, tokens, parents). */
export function realField(name: string, w: World): unknown {
  switch (name) {
    case 'communitySlug':
      return w.community;
    case 'parentId':
      return w.comment;
    case 'voterAgentId':
    case 'reactorAgentId':
    case 'followerAgentId':
    case 'blockerAgentId':
    case 'recipientAgentId':
    case 'subscriberAgentId':
      return w.mine[0].agent.id;
    case 'avatarUrl':
      return 'https://img.example/avatar.png';
    case 'connectKey':
      return w.connectKey ?? 'svc_connect_' + 'x'.repeat(40);
    case 'token':
      return w.claimToken ?? 'svc_claim_' + 'x'.repeat(40);
    case 'email':
      return uniq('f') + '@example.test';
    case 'url':
      return 'http://127.0.0.1:9/hook';
    case 'handle':
      return uniq('fz');
    default:
      return undefined;
  }
}

export function pathFor(route: RouteDef, params: Record<string, string>): string {
  return fullPath(route).replace(/:([A-Za-z0-9_]+)/g, (_, n: string) => params[n] ?? 'x');
}

export interface RawResponse {
  status: number;
  text: string;
  body: any;
  headers: http.IncomingHttpHeaders;
  ms: number;
}

export interface RawRequest {
  method: string;
  /** Path with query string, already encoded (may be deliberately malformed). */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Loopback source address (127.0.0.x): per-IP limits see different clients. */
  localAddress?: string;
}

/** One request on a fresh connection with a chosen source address; bodies are sent as given. */
export async function rawRequest(baseUrl: string, req: RawRequest, timeoutMs = 15000): Promise<RawResponse> {
  const u = new URL(baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(req.headers ?? {}) };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    const r = http.request(
      {
        host: u.hostname,
        port: Number(u.port),
        method: req.method,
        path: req.path,
        headers,
        localAddress: req.localAddress,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, body, headers: res.headers, ms: Date.now() - started });
        });
        res.on('error', reject);
      },
    );
    r.on('timeout', () =>
      r.destroy(new Error(`request timed out after ${timeoutMs} ms: ${req.method} ${req.path.slice(0, 120)}`)),
    );
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

/**
 * What a rejected request must not change: per table of the app, its row count and a digest of
 * every row (usage timestamps aside, so an update is seen as well as an insert or a delete), and
 * the job queue's count. The digest is the sum of the rows' 64-bit hashes: independent of order,
 * so no table is sorted (the suite's database grows to tens of thousands of rows, and this runs
 * before and after every batch of the fuzz's writes).
 */
export async function rowState(): Promise<Record<string, string>> {
  const { db } = await getContext();
  const tables: { table_name: string }[] = (
    await db.raw(
      `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'knex_%' order by 1`,
    )
  ).rows;
  const row = (x: string) => `(to_jsonb(${x}) - 'last_used_at')::text`;
  const parts = tables.map(
    (t) =>
      `(select count(*) || ' rows ' || coalesce(sum(hashtextextended(${row('x')}, 0)), 0) from public."${t.table_name}" x) as "${t.table_name}"`,
  );
  parts.push(`(select count(*) || ' rows' from graphile_worker._private_jobs) as "graphile_worker.jobs"`);
  return (await db.raw(`select ${parts.join(', ')}`)).rows[0];
}

/** Describes what moved between two row states ('' when nothing did). */
export function stateDiff(a: Record<string, string>, b: Record<string, string>): string {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys]
    .filter((k) => a[k] !== b[k])
    .map((k) => `${k}: ${a[k]} → ${b[k]}`)
    .join(', ');
}

/** A stack frame, a source path or an internal module name in a response body. */
export const STACK_RE =
  /\n\s*at [^\n]+|\bat [\w.<>$]+ \([^)]*:\d+:\d+\)|\/work\/|node_modules|\.ts:\d+|\.js:\d+:\d+|Error: [^"]*\n/;
export const CODE_RE = /^[A-Z][A-Z0-9_]*$/;
