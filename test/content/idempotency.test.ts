import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { newCommunity } from './helpers';
import { requestHash, stableStringify } from '../../src/idempotency';
import { idempotencyPrune } from '../../jobs/idempotency_prune';

describe('content: Idempotency-Key', () => {
  it('a retried POST /posts with the same key and body replays the first 201 and creates one post', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    const body = { communitySlug: c, body: 'once only', tags: ['x'] };
    const h = { 'idempotency-key': 'retry-123' };
    const r1 = await api('POST', '/posts', { key: a.key, body, headers: h });
    expect(r1.status).to.equal(201);
    // Within the 3 s post gap: a real second post would be 429, a replay is not.
    const r2 = await api('POST', '/posts', {
      key: a.key,
      body: { tags: ['x'], body: 'once only', communitySlug: c },
      headers: h,
    });
    expect(r2.status).to.equal(201);
    expect(r2.text).to.equal(r1.text);
    expect(r2.headers.get('idempotent-replayed')).to.equal('true');
    const { db } = await getContext();
    expect(await db('posts').where({ author_id: a.agent.id })).to.have.length(1);
  });

  it('the same key with another body is 409 IDEMPOTENCY_KEY_REUSED; keys are per agent', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    const h = { 'idempotency-key': 'shared-key' };
    expect(
      (await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'one' }, headers: h })).status,
    ).to.equal(201);
    const r = await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'two' }, headers: h });
    expect(r.status).to.equal(409);
    expect(r.body.error.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    const other = await api('POST', '/posts', { key: b.key, body: { communitySlug: c, body: 'two' }, headers: h });
    expect(other.status).to.equal(201);
  });

  it('parallel duplicates with one key act once (votes, comments, follows, reactions)', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    const postId = (await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'p' } })).body.data.id;
    const many = (path: string, body: object, key: string) =>
      Promise.all(
        Array.from({ length: 10 }, () => api('POST', path, { key: b.key, body, headers: { 'idempotency-key': key } })),
      );
    const comments = await many(`/posts/${postId}/comments`, { body: 'only one' }, 'c-1');
    expect(comments.map((r) => r.status)).to.deep.equal(Array(10).fill(201));
    expect(new Set(comments.map((r) => r.body.data.id)).size).to.equal(1);
    const votes = await many(`/posts/${postId}/vote`, { value: -1 }, 'v-1');
    expect(votes.every((r) => r.status === 200 && r.body.data.score === -1)).to.equal(true);
    const reacts = await many(`/posts/${postId}/react`, { type: 'fire' }, 'r-1');
    expect(reacts.every((r) => r.status === 200 && r.body.data.counts.fire === 1)).to.equal(true);
    const follows = await Promise.all(
      Array.from({ length: 5 }, () =>
        api('POST', `/agents/${a.handle}/follow`, { key: b.key, headers: { 'idempotency-key': 'f-1' } }),
      ),
    );
    expect(follows.every((r) => r.status === 200 && r.body.data.following === true)).to.equal(true);
    const { db } = await getContext();
    expect(await db('comments').where({ post_id: postId })).to.have.length(1);
  });

  it('a failed first attempt stores nothing: the retry runs for real', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    const h = { 'idempotency-key': 'fail-then-ok' };
    const bad = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'missing-community', body: 'x' },
      headers: h,
    });
    expect(bad.status).to.equal(404);
    const ok = await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'x' }, headers: h });
    expect(ok.status).to.equal(201);
  });

  it('a key older than 24 h no longer replays', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    const c = await newCommunity();
    const h = { 'idempotency-key': 'old-key' };
    ctx.setNow(new Date(Date.now() - 25 * 3600_000));
    try {
      expect(
        (await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'yesterday' }, headers: h })).status,
      ).to.equal(201);
    } finally {
      ctx.setNow(null);
    }
    const r = await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'today' }, headers: h });
    expect(r.status).to.equal(201);
    expect(r.headers.get('idempotent-replayed')).to.equal(null);
    expect(await ctx.db('posts').where({ author_id: a.agent.id })).to.have.length(2);
  });

  it('a malformed Idempotency-Key is 400 VALIDATION_FAILED', async () => {
    const a = await newAgent();
    const r = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'general', body: 'x' },
      headers: { 'idempotency-key': 'x'.repeat(300) },
    });
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('VALIDATION_FAILED');
  });

  it('request hashing ignores key order but not values, method or path', () => {
    expect(stableStringify({ b: 1, a: [{ d: 2, c: 3 }] })).to.equal('{"a":[{"c":3,"d":2}],"b":1}');
    expect(requestHash('POST', '/p', { a: 1, b: 2 })).to.equal(requestHash('post', '/p', { b: 2, a: 1 }));
    expect(requestHash('POST', '/p', { a: 1 })).to.not.equal(requestHash('POST', '/p', { a: 2 }));
    expect(requestHash('POST', '/p', { a: 1 })).to.not.equal(requestHash('POST', '/q', { a: 1 }));
  });
});

describe('content: idempotency_prune job', () => {
  it('removes keys past 24 h and keeps fresh ones', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    await ctx.db('idempotency_keys').insert([
      {
        agent_id: a.agent.id,
        key: 'old',
        request_hash: 'h',
        status: 201,
        response: '{}',
        created_at: new Date(Date.now() - 25 * 3600_000),
      },
      { agent_id: a.agent.id, key: 'new', request_hash: 'h', status: 201, response: '{}', created_at: new Date() },
    ]);
    const logs: string[] = [];
    await idempotencyPrune(ctx.deps)({}, { logger: { info: (m: string) => logs.push(m) } } as any);
    const left = (await ctx.db('idempotency_keys').where({ agent_id: a.agent.id })).map((r) => r.key);
    expect(left).to.deep.equal(['new']);
    expect(logs[0]).to.match(/idempotency_prune: \d+ expired keys removed/);
  });
});
