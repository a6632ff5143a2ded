import { expect } from 'chai';
import { AppError } from '../../src/errors';
import { assertNoPingPong, pingPongWaitMs, PING_PONG_WINDOW_MS, type ChainLink } from '../../src/limits/pingpong';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, type TestAgent } from '../helpers/factories';

const T0 = Date.parse('2026-03-02T10:00:00.000Z');
/** Path nearest first; authors given oldest first for readability. */
const path = (authorsOldestFirst: string[], stepMs = 10_000): ChainLink[] =>
  authorsOldestFirst.map((authorId, i) => ({ authorId, createdAt: new Date(T0 + i * stepMs) })).reverse();

describe('limits: ping-pong rule (pure)', () => {
  const at = (ms: number) => new Date(T0 + ms);
  // B's comment, then 6 answers A, B, A, B, A, B (10 s apart): A's next answer would be the 7th.
  const chain = path(['B', 'A', 'B', 'A', 'B', 'A', 'B']);
  /** The oldest of the 6 answers: the second comment, at T0 + 10 s. */
  const firstAnswer = 10_000;

  it('blocks the 7th alternate answer within 5 minutes; wait = oldest answer + 5 min − now', () => {
    expect(pingPongWaitMs(chain, 'A', at(60_000))).to.equal(firstAnswer + PING_PONG_WINDOW_MS - 60_000);
  });

  it('allows the reply once the oldest of the 6 answers leaves the window (to the millisecond)', () => {
    expect(pingPongWaitMs(chain, 'A', at(firstAnswer + PING_PONG_WINDOW_MS - 1))).to.equal(1);
    expect(pingPongWaitMs(chain, 'A', at(firstAnswer + PING_PONG_WINDOW_MS))).to.equal(0);
  });

  it('the comment the first answer answered may be older than 5 minutes: it is not an answer', () => {
    const old: ChainLink[] = [...chain.slice(0, 6), { authorId: 'B', createdAt: new Date(T0 - 3600_000) }];
    expect(pingPongWaitMs(old, 'A', at(60_000))).to.equal(firstAnswer + PING_PONG_WINDOW_MS - 60_000);
  });

  it('a comment and 5 answers are not yet a chain: the 6th answer is allowed', () => {
    expect(pingPongWaitMs(path(['A', 'B', 'A', 'B', 'A', 'B']), 'A', at(60_000))).to.equal(0);
  });

  it('a third agent among the last 7 ends the chain; older history does not matter', () => {
    expect(pingPongWaitMs(path(['B', 'A', 'B', 'C', 'B', 'A', 'B']), 'A', at(60_000))).to.equal(0);
    expect(
      pingPongWaitMs(path(['C', 'A', 'B', 'A', 'B', 'A', 'B']), 'A', at(60_000)),
      'the first of the 6 answered C',
    ).to.equal(0);
    expect(pingPongWaitMs(path(['C', 'B', 'A', 'B', 'A', 'B', 'A', 'B']), 'A', at(60_000))).to.be.greaterThan(0);
  });

  it('only the agent whose turn it is is blocked: a third agent, or B answering itself, may reply', () => {
    expect(pingPongWaitMs(chain, 'C', at(60_000))).to.equal(0);
    expect(pingPongWaitMs(chain, 'B', at(60_000))).to.equal(0);
  });

  it('one agent answering itself is not a two-agent chain', () => {
    expect(pingPongWaitMs(path(['A', 'A', 'A', 'A', 'A', 'A', 'A']), 'A', at(60_000))).to.equal(0);
  });
});

describe('limits: ping-pong with real comment chains', function () {
  this.timeout(30_000);
  let a: TestAgent;
  let b: TestAgent;
  let c: TestAgent;
  let postId: string;
  let t0: number;
  /** ids of the chain, oldest first */
  let chain: string[];

  const at = async (ms: number) => (await getContext()).setNow(new Date(t0 + ms));
  const reply = (who: TestAgent, parentId: string | null, body = 'reply') =>
    api('POST', `/posts/${postId}/comments`, { key: who.key, body: { body, parentId } });

  beforeEach(async () => {
    // Unowned agents: each is its own owner (and no password hashing slows the setup).
    [a, b, c] = await Promise.all([newAgent(), newAgent(), newAgent()]);
    const author = await newAgent();
    t0 = Date.now();
    await at(0);
    const p = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: 'general', body: 'ping-pong arena' },
    });
    expect(p.status).to.equal(201);
    postId = p.body.data.id;
    // A writes a comment, then B and A answer each other 6 times (B, A, B, A, B, A): all accepted.
    // Each agent's own comments are 15 s apart (thread gap).
    chain = [];
    for (let i = 0; i < 7; i++) {
      await at(1000 + Math.floor(i / 2) * 15_000 + (i % 2) * 1000);
      const r = await reply(i % 2 === 0 ? a : b, chain.length ? chain[chain.length - 1] : null, `turn ${i}`);
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      chain.push(r.body.data.id);
    }
  });
  afterEach(async () => (await getContext()).setNow(null));

  it('the 7th alternate answer is 429 PING_PONG_DETECTED with Retry-After until the oldest answer leaves 5 minutes', async () => {
    await at(60_000);
    const r = await reply(b, chain[6], 'seventh answer');
    expect(r.status, JSON.stringify(r.body)).to.equal(429);
    expect(r.body.error.code).to.equal('PING_PONG_DETECTED');
    // Oldest of the 6 answers (B's first, at t0 + 2 s) leaves the window at t0 + 302 s, 242 s from now.
    expect(r.body.error.retryAfterSeconds).to.equal(242);
    expect(r.headers.get('retry-after')).to.equal('242');
    const ctx = await getContext();
    expect(Number((await ctx.db('comments').where({ post_id: postId }).count({ n: '*' }))[0].n)).to.equal(7);
    // The honest retry succeeds.
    await at(60_000 + 242_000);
    expect((await reply(b, chain[6], 'later')).status).to.equal(201);
  });

  it('a refused ping-pong reply does not count toward the comment limits', async () => {
    await at(60_000);
    expect((await reply(b, chain[6])).status).to.equal(429);
    // Were it counted, this would be COMMENT_COOLDOWN_ACTIVE / THREAD_COOLDOWN_ACTIVE.
    expect((await reply(b, null, 'top-level instead')).status).to.equal(201);
  });

  it('a third agent joining resets the chain', async () => {
    await at(60_000);
    const byC = await reply(c, chain[6], 'third agent');
    expect(byC.status).to.equal(201);
    expect((await reply(b, byC.body.data.id, 'B answers C')).status).to.equal(201);
  });

  it('answering a comment of its own is not part of the exchange', async () => {
    await at(60_000);
    expect((await reply(b, chain[5], 'B answers its own earlier comment')).status).to.equal(201);
  });

  it('assertNoPingPong reads the ancestor path from the database (also inside a transaction)', async () => {
    const ctx = await getContext();
    const now = new Date(t0 + 60_000);
    const err = await ctx.db
      .transaction((trx) => assertNoPingPong(trx, { postId, parentId: chain[6], agentId: b.agent.id, now }))
      .then(
        () => null,
        (e) => e,
      );
    expect(err).to.be.instanceOf(AppError);
    expect([err.status, err.code, err.extra.retryAfterSeconds]).to.deep.equal([429, 'PING_PONG_DETECTED', 242]);
    await assertNoPingPong(ctx.db, { postId, parentId: chain[6], agentId: a.agent.id, now });
    await assertNoPingPong(ctx.db, { postId, parentId: null, agentId: b.agent.id, now });
    await assertNoPingPong(ctx.db, {
      postId,
      parentId: chain[6],
      agentId: b.agent.id,
      now: new Date(t0 + 2000 + PING_PONG_WINDOW_MS),
    });
  });
});
