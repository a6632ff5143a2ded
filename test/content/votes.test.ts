import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { queries } from '../helpers/queries';
import { newCommunity, seedComment, seedPost } from './helpers';
import { hotRank, hotRankSql } from '../../src/content/hot-rank';
import { castVote } from '../../src/votes/service';

async function post(key: string) {
  const c = await newCommunity();
  const r = await api('POST', '/posts', { key, body: { communitySlug: c, body: 'vote on me' } });
  expect(r.status).to.equal(201);
  return r.body.data.id as string;
}

describe('content: votes', () => {
  it('POST /posts/:id/vote: up, down, clear; response {postId, userVote, score}; hot follows the score; interaction row', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    const up = await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: 1 } });
    expect(up.status).to.equal(200);
    expect(up.body.data).to.deep.equal({ postId: id, userVote: 1, score: 1 });
    const { db } = await getContext();
    let row = await db('posts').where({ id }).first();
    expect(row.hot).to.be.closeTo(hotRank(1, row.created_at), 1e-9);
    const down = await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: -1 } });
    expect(down.body.data).to.deep.equal({ postId: id, userVote: -1, score: -1 });
    row = await db('posts').where({ id }).first();
    expect(row).to.include({ upvotes: 0, downvotes: 1, score: -1 });
    let ix = await db('interactions').where({ kind: 'vote', actor_agent_id: b.agent.id, post_id: id }).first();
    expect(ix).to.include({ value: -1, active: true, target_agent_id: a.agent.id, comment_id: null });
    const clear = await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: 0 } });
    expect(clear.body.data).to.deep.equal({ postId: id, userVote: 0, score: 0 });
    ix = await db('interactions').where({ kind: 'vote', actor_agent_id: b.agent.id, post_id: id }).first();
    expect(ix.active).to.equal(false);
    expect(await db('votes').where({ voter_id: b.agent.id, post_id: id })).to.have.length(0);
    const detail = await api('GET', `/posts/${id}`);
    expect(detail.body.data.metrics).to.include({ score: 0, upvotes: 0, downvotes: 0 });
  });

  it('50 parallel identical votes move the score by exactly 1 and leave one row', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    const rs = await Promise.all(
      Array.from({ length: 50 }, () => api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: 1 } })),
    );
    expect(rs.map((r) => r.status)).to.deep.equal(Array(50).fill(200));
    expect(rs.every((r) => r.body.data.score === 1 && r.body.data.userVote === 1)).to.equal(true);
    const { db } = await getContext();
    expect((await db('posts').where({ id }).first()).score).to.equal(1);
    expect(await db('votes').where({ post_id: id })).to.have.length(1);
    expect(await db('interactions').where({ post_id: id, kind: 'vote' })).to.have.length(1);
  });

  it('one voter changing its vote in parallel (1, -1, 0): the counters always match the stored vote', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    const { db } = await getContext();
    for (let round = 0; round < 3; round++) {
      const values = Array.from({ length: 15 }, (_, i) => [1, -1, 0][(i + round) % 3]);
      const rs = await Promise.all(
        values.map((value) => api('POST', `/posts/${id}/vote`, { key: b.key, body: { value } })),
      );
      expect(rs.map((r) => r.status)).to.deep.equal(Array(15).fill(200));
      const stored = (await db('votes').where({ voter_id: b.agent.id, post_id: id }).first())?.value ?? 0;
      const row = await db('posts').where({ id }).first();
      expect(row).to.include({ score: stored, upvotes: stored === 1 ? 1 : 0, downvotes: stored === -1 ? 1 : 0 });
      expect(row.hot).to.equal(hotRank(stored, row.created_at));
      const ix = await db('interactions').where({ kind: 'vote', actor_agent_id: b.agent.id, post_id: id }).first();
      expect(ix.active).to.equal(stored !== 0);
      if (stored !== 0) expect(ix.value).to.equal(stored);
    }
  });

  it('hotRankSql computes in PostgreSQL exactly what hotRank computes', async () => {
    const { db } = await getContext();
    const times = [
      new Date('2024-01-01T00:00:00Z'),
      new Date('2026-11-24T07:31:12.345Z'),
      new Date('2023-06-30T23:59:59.999Z'),
    ];
    for (const at of times) {
      for (const s of [-1000, -101, -10, -2, -1, 0, 1, 2, 3, 7, 10, 99, 100, 1001, 123456]) {
        const r = await db.raw(`select ${hotRankSql('?::int', '?::timestamptz')} as hot`, [s, s, at]);
        expect(r.rows[0].hot, `score ${s} at ${at.toISOString()}`).to.equal(hotRank(s, at));
      }
    }
  });

  it('parallel votes from 20 different agents count once each', async () => {
    const a = await newAgent();
    const id = await post(a.key);
    const voters = await Promise.all(Array.from({ length: 20 }, () => newAgent()));
    await Promise.all(
      voters.map((v, i) => api('POST', `/posts/${id}/vote`, { key: v.key, body: { value: i % 4 === 0 ? -1 : 1 } })),
    );
    const { db } = await getContext();
    const row = await db('posts').where({ id }).first();
    expect(row).to.include({ score: 10, upvotes: 15, downvotes: 5 });
  });

  it('400 SELF_VOTE_FORBIDDEN on own post and comment; 400 SAME_OWNER_VOTE_FORBIDDEN between agents of one owner', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    const sibling = await newAgent({ owner: o });
    const id = await post(a.key);
    const self = await api('POST', `/posts/${id}/vote`, { key: a.key, body: { value: 1 } });
    expect(self.status).to.equal(400);
    expect(self.body.error.code).to.equal('SELF_VOTE_FORBIDDEN');
    const same = await api('POST', `/posts/${id}/vote`, { key: sibling.key, body: { value: 1 } });
    expect(same.status).to.equal(400);
    expect(same.body.error.code).to.equal('SAME_OWNER_VOTE_FORBIDDEN');
    const cid = (await api('POST', `/posts/${id}/comments`, { key: sibling.key, body: { body: 'c' } })).body.data.id;
    const selfC = await api('POST', `/comments/${cid}/vote`, { key: sibling.key, body: { value: -1 } });
    expect(selfC.body.error.code).to.equal('SELF_VOTE_FORBIDDEN');
    const sameC = await api('POST', `/comments/${cid}/vote`, { key: a.key, body: { value: -1 } });
    expect(sameC.body.error.code).to.equal('SAME_OWNER_VOTE_FORBIDDEN');
  });

  it('a vote cast before a claim brought both agents under one owner can still be withdrawn (value 0), not changed', async () => {
    const x = await newAgent();
    const y = await newAgent();
    const id = await post(y.key);
    expect((await api('POST', `/posts/${id}/vote`, { key: x.key, body: { value: 1 } })).body.data.score).to.equal(1);
    const o = await newOwner();
    const { db } = await getContext();
    await db('agents').whereIn('id', [x.agent.id, y.agent.id]).update({ owner_id: o.owner.id });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    const flip = await api('POST', `/posts/${id}/vote`, { key: x.key, body: { value: -1 } });
    expect(flip.status).to.equal(400);
    expect(flip.body.error.code).to.equal('SAME_OWNER_VOTE_FORBIDDEN');
    const off = await api('POST', `/posts/${id}/vote`, { key: x.key, body: { value: 0 } });
    expect(off.status, off.text).to.equal(200);
    expect(off.body.data).to.deep.equal({ postId: id, userVote: 0, score: 0 });
    expect(await db('votes').where({ voter_id: x.agent.id, post_id: id }).first()).to.equal(undefined);
    expect((await api('GET', `/posts/${id}`)).body.data.metrics).to.include({ score: 0, upvotes: 0 });
  });

  it('POST /comments/:id/vote: {commentId, userVote, score}; the post score does not move', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    const cid = (await api('POST', `/posts/${id}/comments`, { key: a.key, body: { body: 'c' } })).body.data.id;
    const r = await api('POST', `/comments/${cid}/vote`, { key: b.key, body: { value: 1 } });
    expect(r.status).to.equal(200);
    expect(r.body.data).to.deep.equal({ commentId: cid, userVote: 1, score: 1 });
    expect((await api('GET', `/posts/${id}`)).body.data.score).to.equal(0);
    const tree = await api('GET', `/posts/${id}/comments`);
    expect(tree.body.data[0]).to.include({ score: 1, upvotes: 1 });
    const { db } = await getContext();
    const ix = await db('interactions').where({ kind: 'vote', comment_id: cid }).first();
    expect(ix).to.include({ post_id: id, actor_agent_id: b.agent.id, target_agent_id: a.agent.id, value: 1 });
  });

  it('vote errors: invalid value 400, unknown or deleted target 404, no credentials 401, missing scope 403', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    for (const body of [{ value: 2 }, { value: '1' }, {}, { value: 0.5 }]) {
      const r = await api('POST', `/posts/${id}/vote`, { key: b.key, body });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    expect(
      (await api('POST', '/posts/00000000-0000-4000-8000-000000000000/vote', { key: b.key, body: { value: 1 } }))
        .status,
    ).to.equal(404);
    expect(
      (await api('POST', '/comments/00000000-0000-4000-8000-000000000000/vote', { key: b.key, body: { value: 1 } }))
        .status,
    ).to.equal(404);
    expect((await api('POST', `/posts/${id}/vote`, { body: { value: 1 } })).status).to.equal(401);
    const ro = await newAgent({ scopes: ['read', 'post'] });
    const r = await api('POST', `/posts/${id}/vote`, { key: ro.key, body: { value: 1 } });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('INSUFFICIENT_SCOPE');
    await api('DELETE', `/posts/${id}`, { key: a.key });
    expect((await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: 1 } })).status).to.equal(404);
  });

  it('owner session votes with voterAgentId and X-CSRF-Token; 400 ACTING_AGENT_REQUIRED, 403 NOT_AGENT_OWNER, 403 CSRF_TOKEN_INVALID', async () => {
    const author = await newAgent();
    const o = await newOwner();
    const mine = await newAgent({ owner: o });
    const other = await newAgent();
    const id = await post(author.key);
    const ok = await api('POST', `/posts/${id}/vote`, {
      session: o.session,
      body: { value: 1, voterAgentId: mine.agent.id },
    });
    expect(ok.status).to.equal(200);
    expect(ok.body.data).to.deep.equal({ postId: id, userVote: 1, score: 1 });
    const missing = await api('POST', `/posts/${id}/vote`, { session: o.session, body: { value: 1 } });
    expect(missing.status).to.equal(400);
    expect(missing.body.error.code).to.equal('ACTING_AGENT_REQUIRED');
    const notMine = await api('POST', `/posts/${id}/vote`, {
      session: o.session,
      body: { value: 1, voterAgentId: other.agent.id },
    });
    expect(notMine.status).to.equal(403);
    expect(notMine.body.error.code).to.equal('NOT_AGENT_OWNER');
    const noCsrf = await api('POST', `/posts/${id}/vote`, {
      session: o.session,
      noCsrf: true,
      body: { value: 1, voterAgentId: mine.agent.id },
    });
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_TOKEN_INVALID');
  });

  it("with an API key the acting-agent field may name only the key's own agent: another id is 400, nothing is written", async () => {
    const author = await newAgent();
    const voter = await newAgent();
    const other = await newAgent();
    const id = await post(author.key);
    const { db } = await getContext();
    const wrong = await api('POST', `/posts/${id}/vote`, {
      key: voter.key,
      body: { value: 1, voterAgentId: other.agent.id },
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error).to.include({ code: 'VALIDATION_FAILED' });
    expect(wrong.body.error.details).to.deep.equal([
      { path: 'body/voterAgentId', message: "must be the API key's own agent id (or absent)" },
    ]);
    const react = await api('POST', `/posts/${id}/react`, {
      key: voter.key,
      body: { type: 'fire', reactorAgentId: other.agent.id },
    });
    expect([react.status, react.body.error.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    const follow = await api('DELETE', `/agents/${author.handle}/follow?followerAgentId=${other.agent.id}`, {
      key: voter.key,
    });
    expect([follow.status, follow.body.error.details[0].path]).to.deep.equal([400, 'query/followerAgentId']);
    expect(await db('votes').where({ post_id: id })).to.have.length(0);
    expect(await db('reactions').where({ post_id: id })).to.have.length(0);
    // Its own id (any case) is the same as leaving the field out.
    const own = await api('POST', `/posts/${id}/vote`, {
      key: voter.key,
      body: { value: 1, voterAgentId: voter.agent.id.toUpperCase() },
    });
    expect(own.status).to.equal(200);
    expect(await db('votes').where({ post_id: id, voter_id: voter.agent.id })).to.have.length(1);
  });

  it('refused votes (self, same owner, unknown or deleted target) count nothing: the full budget is left; malformed requests never reach the limiter', async () => {
    const o = await newOwner();
    const voter = await newAgent({ owner: o });
    const sibling = await newAgent({ owner: o });
    const other = await newAgent();
    const c = await newCommunity();
    const own = await seedPost({ authorId: voter.agent.id, community: c });
    const siblings = await seedPost({ authorId: sibling.agent.id, community: c });
    const gone = await seedPost({ authorId: other.agent.id, community: c });
    const live = await seedPost({ authorId: other.agent.id, community: c });
    const { db, deps } = await getContext();
    const ownComment = await seedComment(live, voter.agent.id);
    const goneComment = await seedComment(live, other.agent.id);
    const onGonePost = await seedComment(gone, other.agent.id);
    await db('posts').where({ id: gone }).update({ deleted_at: new Date() });
    await db('comments').where({ id: goneComment }).update({ deleted_at: new Date() });
    const missing = '00000000-0000-4000-8000-000000000000';
    const refused: [string, number, string][] = [
      [`/posts/${own}/vote`, 400, 'SELF_VOTE_FORBIDDEN'],
      [`/comments/${ownComment}/vote`, 400, 'SELF_VOTE_FORBIDDEN'],
      [`/posts/${siblings}/vote`, 400, 'SAME_OWNER_VOTE_FORBIDDEN'],
      [`/posts/${missing}/vote`, 404, 'NOT_FOUND'],
      [`/comments/${missing}/vote`, 404, 'NOT_FOUND'],
      [`/posts/${gone}/vote`, 404, 'NOT_FOUND'],
      [`/comments/${goneComment}/vote`, 404, 'NOT_FOUND'],
      [`/comments/${onGonePost}/vote`, 404, 'NOT_FOUND'],
    ];
    // More refusals than the per-minute cap (60): none may answer 429.
    for (let i = 0; i < 9; i++) {
      const rs = await Promise.all(
        refused.map(([path]) => api('POST', path, { key: voter.key, body: { value: i % 2 ? -1 : 1 } })),
      );
      rs.forEach((r, j) => {
        expect([r.status, r.body.error?.code], refused[j][0]).to.deep.equal([refused[j][1], refused[j][2]]);
      });
    }
    const ok = await api('POST', `/posts/${live}/vote`, { key: voter.key, body: { value: 1 } });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('ratelimit')).to.equal('"vote-agent";r=59;t=61, "vote-owner";r=119;t=61');
    expect(await db('votes').where({ voter_id: voter.agent.id })).to.have.length(1);
    // A malformed id or body is refused before the limiter is asked at all.
    const calls: string[] = [];
    const orig = deps.limiter.take.bind(deps.limiter);
    deps.limiter.take = async (action, subject) => {
      if (subject.agentId === voter.agent.id) calls.push(action);
      return orig(action, subject);
    };
    try {
      expect((await api('POST', '/posts/not-a-uuid/vote', { key: voter.key, body: { value: 1 } })).status).to.equal(
        404,
      );
      expect((await api('POST', `/posts/${live}/vote`, { key: voter.key, body: { value: 7 } })).status).to.equal(400);
    } finally {
      deps.limiter.take = orig;
    }
    expect(calls).to.deep.equal([]);
  });

  it('the limit is checked first: over it, a vote that would be a 404 or a refusal answers 429', async () => {
    const o = await newOwner();
    const voter = await newAgent({ owner: o });
    const other = await newAgent();
    const c = await newCommunity();
    const own = await seedPost({ authorId: voter.agent.id, community: c });
    const live = await seedPost({ authorId: other.agent.id, community: c });
    for (let i = 0; i < 60; i++)
      expect((await api('POST', `/posts/${live}/vote`, { key: voter.key, body: { value: 1 } })).status).to.equal(200);
    for (const path of [
      `/posts/${own}/vote`,
      '/posts/00000000-0000-4000-8000-000000000000/vote',
      `/posts/${live}/vote`,
    ]) {
      const r = await api('POST', path, { key: voter.key, body: { value: 1 } });
      expect([r.status, r.body.error.code], path).to.deep.equal([429, 'RATE_LIMITED']);
    }
  });

  it('a vote is one PostgreSQL statement (the target, the refusal rules and the write); an unchanged vote reads the committed score', async () => {
    const author = await newAgent();
    const voter = await newAgent();
    const c = await newCommunity();
    const id = await seedPost({ authorId: author.agent.id, community: c });
    const cid = await seedComment(id, author.agent.id);
    const { db, deps } = await getContext();
    const statements = async (f: () => Promise<unknown>) => {
      const { sql, value } = await queries(() => f().catch((e: unknown) => e));
      return { result: value, sql };
    };
    for (const [kind, target] of [
      ['post', id],
      ['comment', cid],
    ] as const) {
      for (const value of [1, -1, 0] as const) {
        const { result, sql } = await statements(() => castVote(db, deps, voter.agent, kind, target, value));
        expect(sql, `${kind} ${value}`).to.have.length(1);
        expect((result as any).data.score).to.equal(value);
      }
      // Already so: the statement changed nothing, the committed score is read.
      const same = await statements(() => castVote(db, deps, voter.agent, kind, target, 0));
      expect(same.sql).to.have.length(2);
      expect((same.result as any).data.score).to.equal(0);
      const self = await statements(() => castVote(db, deps, author.agent, kind, target, 1));
      expect(self.sql).to.have.length(1);
      expect((self.result as any).code).to.equal('SELF_VOTE_FORBIDDEN');
    }
  });

  it('25 parallel identical votes on a comment move its score by exactly 1, 25 parallel clears bring it back to 0', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    const id = await seedPost({ authorId: a.agent.id, community: c });
    const cid = await seedComment(id, a.agent.id);
    const { db } = await getContext();
    for (const value of [1, 0]) {
      const rs = await Promise.all(
        Array.from({ length: 25 }, () => api('POST', `/comments/${cid}/vote`, { key: b.key, body: { value } })),
      );
      expect(rs.map((r) => r.status)).to.deep.equal(Array(25).fill(200));
      expect(rs.every((r) => r.body.data.score === value && r.body.data.userVote === value)).to.equal(true);
      expect(await db('comments').where({ id: cid }).first()).to.include({
        score: value,
        upvotes: value,
        downvotes: 0,
      });
      expect(await db('votes').where({ comment_id: cid })).to.have.length(value);
      const ix = await db('interactions').where({ kind: 'vote', comment_id: cid });
      expect(ix.map((r) => [r.post_id, r.target_agent_id, r.value, r.active])).to.deep.equal([
        [id, a.agent.id, 1, value === 1],
      ]);
    }
    expect(await db('posts').where({ id }).first()).to.include({ score: 0, upvotes: 0, downvotes: 0 });
  });

  // The rules are decided by the statement castVote runs (no copy of them in TypeScript): every
  // transition and every refusal goes through it here, on posts and comments.
  it('every transition between none, up and down moves score, upvotes and downvotes by the difference', async () => {
    const { db, deps } = await getContext();
    const author = await newAgent();
    const c = await newCommunity();
    const values = [0, 1, -1] as const;
    for (const kind of ['post', 'comment'] as const) {
      for (const prev of values) {
        for (const next of values) {
          const postId = await seedPost({ authorId: author.agent.id, community: c });
          const id = kind === 'post' ? postId : await seedComment(postId, author.agent.id);
          const voter = (await newAgent()).agent;
          if (prev !== 0) await castVote(db, deps, voter, kind, id, prev);
          const r = await castVote(db, deps, voter, kind, id, next);
          const what = `${kind} ${prev} -> ${next}`;
          expect(r.data, what).to.include({ userVote: next, score: next });
          const row = await db(kind === 'post' ? 'posts' : 'comments')
            .where({ id })
            .first();
          expect(row, what).to.include({ score: next, upvotes: next === 1 ? 1 : 0, downvotes: next === -1 ? 1 : 0 });
          const stored = await db('votes').where({ voter_id: voter.id, [`${kind}_id`]: id });
          expect(
            stored.map((v) => v.value),
            what,
          ).to.deep.equal(next === 0 ? [] : [next]);
        }
      }
    }
  });

  it('refusals for every value: self always (a withdrawal too), same owner for 1 and -1 only, never between unowned agents', async () => {
    const { db, deps } = await getContext();
    const o = await newOwner();
    const author = await newAgent({ owner: o });
    const sibling = (await newAgent({ owner: o })).agent;
    const stranger = (await newAgent()).agent;
    const unownedAuthor = await newAgent();
    const unownedVoter = (await newAgent()).agent;
    const c = await newCommunity();
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: { code?: string }) => e.code ?? String(e),
      );
    for (const kind of ['post', 'comment'] as const) {
      const postId = await seedPost({ authorId: author.agent.id, community: c });
      const id = kind === 'post' ? postId : await seedComment(postId, author.agent.id);
      const unownedPost = await seedPost({ authorId: unownedAuthor.agent.id, community: c });
      const unownedId = kind === 'post' ? unownedPost : await seedComment(unownedPost, unownedAuthor.agent.id);
      for (const value of [1, -1, 0] as const) {
        const what = `${kind} ${value}`;
        expect(await refusal(castVote(db, deps, author.agent, kind, id, value)), what).to.equal('SELF_VOTE_FORBIDDEN');
        expect(await refusal(castVote(db, deps, sibling, kind, id, value)), what).to.equal(
          value === 0 ? null : 'SAME_OWNER_VOTE_FORBIDDEN',
        );
        expect(await refusal(castVote(db, deps, stranger, kind, id, value)), what).to.equal(null);
        expect(await refusal(castVote(db, deps, unownedVoter, kind, unownedId, value)), what).to.equal(null);
      }
      // A refused vote wrote nothing: only the stranger's and the unowned voter's last (0) remain, i.e. none.
      expect(
        await db(kind === 'post' ? 'posts' : 'comments')
          .where({ id })
          .first(),
      ).to.include({
        score: 0,
        upvotes: 0,
        downvotes: 0,
      });
    }
  });
});
