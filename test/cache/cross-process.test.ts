import { expect } from 'chai';
import { ChildProcess, spawn } from 'child_process';
import path from 'path';
import { getContext, TEST_REDIS_URL } from '../helpers/context';
import { request } from '../helpers/api';
import { newAgent, newOwner } from '../helpers/factories';
import { freePort, outputOf, runToEnd, spawnEntry, stopChild, waitHttp } from '../faults/harness';

/**
 * Issue 25.1: whatever changes data another process caches (the CLI, any web process) tells every
 * web process, which evicts at once. Two real web processes (src/server.ts) and the real CLI
 * (src/cli.ts) on the test database; reads come right after the write returns, well inside every
 * cache's TTL (reputation 30 s, leaderboards 5 s, API keys 3 s).
 */
const REPO = path.resolve(__dirname, '..', '..');

function envFor(databaseUrl: string, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    // The test context's: sessions it creates are valid in the web processes.
    SESSION_SECRET: 'test-session-secret-0123456789abcdef0123',
    LOG_LEVEL: 'silent',
  };
}

async function cli(databaseUrl: string, ...args: string[]): Promise<string> {
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(REPO, 'src', 'cli.ts'), ...args], {
    cwd: REPO,
    env: envFor(databaseUrl, 0),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (out += b));
  const code = await runToEnd(child, 120_000);
  expect(code, out).to.equal(0);
  return out;
}

describe('read caches across processes (two web processes and the CLI)', function () {
  this.timeout(180_000);
  const webs: { child: ChildProcess; base: string }[] = [];

  before(async () => {
    const { databaseUrl } = await getContext();
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      const child = spawnEntry('server', envFor(databaseUrl, port));
      const base = `http://127.0.0.1:${port}`;
      webs.push({ child, base });
    }
    for (const w of webs) {
      try {
        await waitHttp(`${w.base}/health`, 60_000);
      } catch (e) {
        throw new Error(`${(e as Error).message}: ${outputOf(w.child)}`, { cause: e });
      }
    }
  });

  after(async () => {
    for (const w of webs.splice(0)) await stopChild(w.child);
  });

  const get = (w: { base: string }, p: string, key?: string) => request('GET', `${w.base}/api/v1${p}`, { key });
  /**
   * The first answer that passes `ok`, asked again for at most 500 ms (far inside every TTL): a
   * NOTIFY reaches another process's listener a few milliseconds after the write's answer at worst
   * (its PostgreSQL backend must be scheduled to send it), so on a loaded machine the very next
   * request can arrive first.
   */
  const soon = async (ask: () => Promise<any>, ok: (r: any) => boolean) => {
    const until = Date.now() + 500;
    let r = await ask();
    while (!ok(r) && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 20));
      r = await ask();
    }
    return r;
  };

  it('recompute-reputation --now and recompute-leaderboards --now: both web processes answer the new reputation and leaderboard as soon as the command returns', async () => {
    const { databaseUrl, db } = await getContext();
    const author = await newAgent({ owner: await newOwner({ verified: true }) });
    const voter = await newAgent({ owner: await newOwner({ verified: true }) });
    const post = await request('POST', `${webs[0].base}/api/v1/posts`, {
      key: author.key,
      body: { communitySlug: 'general', body: 'scored across processes' },
    });
    expect(post.status, post.text).to.equal(201);
    const vote = await request('POST', `${webs[1].base}/api/v1/posts/${post.body.data.id}/vote`, {
      key: voter.key,
      body: { value: 1 },
    });
    expect(vote.status, vote.text).to.equal(200);

    const repPath = `/agents/${author.handle}/reputation`;
    const lbPath = '/leaderboards?category=overall';
    // Read twice in each process: the second answer comes from its cache.
    for (const w of webs) {
      for (let i = 0; i < 2; i++) {
        const r = await get(w, repPath);
        expect(r.body.data).to.deep.include({ score: null, computedAt: null });
        expect((await get(w, lbPath)).status).to.equal(200);
      }
    }
    const lbBefore = (await get(webs[0], lbPath)).body.data;

    await cli(databaseUrl, 'recompute-reputation', '--now');
    const stored = await db('reputation_scores').where({ agent_id: author.agent.id }).first('score', 'computed_at');
    expect(stored, 'the recompute scored the author').to.not.equal(undefined);
    for (const w of webs) {
      const r = await soon(
        () => get(w, repPath),
        (x) => x.body?.data?.score !== null,
      );
      expect(r.body.data.score, w.base).to.be.a('number').and.equal(stored.score);
      expect(r.body.data.computedAt, w.base).to.equal(new Date(stored.computed_at).toISOString());
    }

    await cli(databaseUrl, 'recompute-leaderboards', '--now');
    for (const w of webs) {
      const lb = (
        await soon(
          () => get(w, lbPath),
          (x) => x.body?.data?.computedAt !== lbBefore.computedAt,
        )
      ).body.data;
      expect(lb.week).to.equal(lbBefore.week);
      const snap = await db('leaderboard_snapshots').where({ week: lb.week, category: 'overall' }).first('computed_at');
      expect(lb.computedAt, w.base).to.equal(new Date(snap.computed_at).toISOString());
      expect(lb.computedAt).to.not.equal(lbBefore.computedAt);
    }
  });

  it("recompute-reputation --handle --now: both web processes drop every cached reputation, the rescored agent's and the others' (the run's clock is new)", async () => {
    const { databaseUrl, db } = await getContext();
    const verified = async () => newAgent({ owner: await newOwner({ verified: true }) });
    const [a, b, voter] = [await verified(), await verified(), await verified()];
    const posts: Record<string, string> = {};
    for (const x of [a, b]) {
      const p = await request('POST', `${webs[0].base}/api/v1/posts`, {
        key: x.key,
        body: { communitySlug: 'general', body: 'rescored across processes' },
      });
      expect(p.status, p.text).to.equal(201);
      posts[x.handle] = p.body.data.id;
    }
    const vote = async (postId: string) =>
      expect(
        (await request('POST', `${webs[1].base}/api/v1/posts/${postId}/vote`, { key: voter.key, body: { value: 1 } }))
          .status,
      ).to.equal(200);
    // A window clock now, then A as no run below touches it: old, not stamped, no interaction received.
    await cli(databaseUrl, 'recompute-reputation', '--now');
    await db('agents')
      .where({ id: a.agent.id })
      .update({ created_at: new Date(Date.now() - 400.5 * 86_400_000) });
    await db('scoring_agent_changes').where({ agent_id: a.agent.id }).delete();
    await db('reputation_scores_v2').where({ agent_id: a.agent.id }).delete();
    await db('reputation_scores').where({ agent_id: a.agent.id }).update({ score: 420 });
    const repPath = (h: string) => `/agents/${h}/reputation`;
    for (const w of webs) for (const x of [a, b]) for (let i = 0; i < 2; i++) await get(w, repPath(x.handle));
    // Not announced: a process that empties A's entry answers 421, one that keeps it 420.
    await db('reputation_scores').where({ agent_id: a.agent.id }).update({ score: 421 });

    await vote(posts[b.handle]);
    await cli(databaseUrl, 'recompute-reputation', '--handle', b.handle, '--now');
    const storedB = await db('reputation_scores').where({ agent_id: b.agent.id }).first('computed_at');
    const atB = new Date(storedB.computed_at).toISOString();
    for (const w of webs) {
      const r = await soon(
        () => get(w, repPath(b.handle)),
        (x) => x.body?.data?.computedAt === atB,
      );
      expect(r.body.data.computedAt, w.base).to.equal(atB);
      // A was not rescored, but what it shows is at the run's clock now: its entry was dropped too.
      expect((await get(w, repPath(a.handle))).body.data, w.base).to.deep.include({ score: 421, computedAt: atB });
    }

    await vote(posts[a.handle]);
    await cli(databaseUrl, 'recompute-reputation', '--handle', a.handle, '--now');
    const storedA = await db('reputation_scores').where({ agent_id: a.agent.id }).first('score', 'computed_at');
    const atA = new Date(storedA.computed_at).toISOString();
    for (const w of webs) {
      const r = await soon(
        () => get(w, repPath(a.handle)),
        (x) => x.body?.data?.computedAt === atA,
      );
      expect(r.body.data, w.base).to.deep.include({ computedAt: atA, score: storedA.score });
    }
  });

  it('a key revoked through one web process is refused by the other at once; an agent suspended through the CLI is refused by both', async () => {
    const { databaseUrl } = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const b = await newAgent();
    // Both processes hold both principals in their caches.
    for (const w of webs) {
      for (const k of [a.key, b.key]) expect((await get(w, '/me', k)).status).to.equal(200);
    }
    const keys = await request('GET', `${webs[0].base}/api/v1/owner/agents/${a.agent.id}/keys`, {
      session: owner.session,
    });
    const revoked = await request(
      'DELETE',
      `${webs[0].base}/api/v1/owner/agents/${a.agent.id}/keys/${keys.body.data[0].id}`,
      { session: owner.session },
    );
    expect(revoked.status, revoked.text).to.equal(200);
    const other = await soon(
      () => get(webs[1], '/me', a.key),
      (r) => r.status === 401,
    );
    expect(other.status).to.equal(401);
    expect(other.body.error.code).to.equal('INVALID_API_KEY');

    await cli(databaseUrl, 'suspend-agent', b.handle);
    for (const w of webs) {
      const refused = await soon(
        () =>
          request('POST', `${w.base}/api/v1/posts`, {
            key: b.key,
            body: { communitySlug: 'general', body: 'after the suspension' },
          }),
        (r) => r.status === 403,
      );
      expect(refused.status, w.base).to.equal(403);
      expect(refused.body.error.code).to.equal('AGENT_SUSPENDED');
    }
  });
});
