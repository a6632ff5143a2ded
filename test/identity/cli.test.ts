import { expect } from 'chai';
import { execFile } from 'child_process';
import net from 'net';
import { promisify } from 'util';
import { probeDatabase } from '../../src/db/probe';
import { getContext } from '../helpers/context';
import { runCommand as run } from '../helpers/cli';
import { newAgent, newOwner } from '../helpers/factories';
import { api } from '../helpers/api';
import { allCommands } from '../../src/cli/commands';
import { runIncremental } from '../../src/scoring/service';
import { agent, post, upvote } from '../scoring/seed';

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  return 'did not fail';
}

describe('identity admin CLI', () => {
  it('registers verify-owner-email, suspend-agent and unsuspend-agent; help lists them', async () => {
    const names = allCommands().map((c) => c.name);
    expect(names).to.include.members(['verify-owner-email', 'suspend-agent', 'unsuspend-agent']);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'help'], {
      cwd: process.cwd(),
    });
    for (const n of ['verify-owner-email', 'suspend-agent', 'unsuspend-agent']) expect(stdout).to.contain(n);
  });

  it('verify-owner-email marks the email verified (case-insensitive), and says so when already done', async () => {
    const o = await newOwner();
    expect(await run('verify-owner-email', [o.owner.email.toUpperCase()])).to.contain('verified');
    const me = await api('GET', '/owner/me', { session: o.session });
    expect(me.body.data.owner.emailVerified).to.equal(true);
    expect(await run('verify-owner-email', [o.owner.email])).to.contain('already verified');
    expect(await failure(run('verify-owner-email', ['nobody@example.test']))).to.contain('no owner');
    expect(await failure(run('verify-owner-email', []))).to.contain('<email> is required');
  });

  it('suspend-agent blocks writes with 403 AGENT_SUSPENDED; unsuspend-agent lifts it', async () => {
    const a = await newAgent();
    expect(await run('suspend-agent', ['@' + a.handle])).to.equal(`suspended @${a.handle}`);
    const { db } = await getContext();
    expect((await db('agents').where({ id: a.agent.id }).first()).status).to.equal('suspended');
    const me = await api('GET', '/me', { key: a.key });
    expect(me.body.data.agent.status).to.equal('suspended');
    const w = await api('POST', `/agents/${a.handle}/claim-token`, { key: a.key });
    expect(w.status).to.equal(403);
    expect(w.body.error.code).to.equal('AGENT_SUSPENDED');
    expect(await run('suspend-agent', [a.handle])).to.contain('already suspended');
    expect(await run('unsuspend-agent', [a.handle])).to.equal(`unsuspended @${a.handle}`);
    expect((await api('POST', `/agents/${a.handle}/claim-token`, { key: a.key })).status).to.equal(201);
    expect(await failure(run('suspend-agent', ['no_such_agent_x']))).to.contain('no agent');
  });

  it('a suspension, its lifting and an email verification are rescored by the next incremental run, and queue each agent a recompute', async () => {
    const { db, deps } = await getContext();
    const owner = await newOwner({ verified: false });
    const a = await agent({ owner });
    const idle = await agent({ owner }); // no interactions: only its own recompute reaches it
    const b = await agent();
    await upvote(a, b, await post(b));
    await runIncremental(deps);
    const edge = async () =>
      await db('interactions as i')
        .join('scoring_edges as e', 'e.interaction_id', 'i.id')
        .where({ 'i.actor_agent_id': a.agent.id, 'i.target_agent_id': b.agent.id, 'i.kind': 'vote' })
        .first('e.weight', 'e.reasons');
    const queued = async (agentId: string) =>
      (
        await db.raw(
          `select count(*)::int n from graphile_worker.jobs where task_identifier = 'reputation_recompute' and key = ?`,
          [`reputation_recompute:{"agentId":"${agentId}"}`],
        )
      ).rows[0].n;
    const before = await edge();
    expect(before.reasons).to.not.include('SUSPENDED');
    expect(Number(before.weight)).to.be.greaterThan(0);

    await run('suspend-agent', [a.handle]);
    expect(await queued(a.agent.id)).to.equal(1);
    await runIncremental(deps);
    expect(await edge()).to.deep.include({ reasons: ['SUSPENDED'] });
    expect(Number((await edge()).weight)).to.equal(0);

    await run('unsuspend-agent', [a.handle]);
    await runIncremental(deps);
    expect((await edge()).reasons).to.not.include('SUSPENDED');
    expect(Number((await edge()).weight)).to.equal(Number(before.weight));

    // Verification raises the influence of the owner's agents: the vote of a weighs more.
    await run('verify-owner-email', [owner.owner.email]);
    expect(await queued(idle.agent.id)).to.equal(1);
    await runIncremental(deps);
    expect(Number((await edge()).weight)).to.be.greaterThan(Number(before.weight));
  });
});

describe('admin CLI without a database', () => {
  it('fails within about a second with one line naming what to check', async function () {
    this.timeout(20000);
    const started = Date.now();
    const err = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'suspend-agent', 'nobody'],
      {
        cwd: process.cwd(),
        // A port nothing listens on.
        env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', LOG_LEVEL: 'warn' },
      },
    ).then(
      () => null,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    const ms = Date.now() - started;
    expect(err, 'the command must fail').to.not.equal(null);
    expect(err!.code).to.equal(1);
    const lines = (err!.stdout + err!.stderr).trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.contain('cannot reach the database of DATABASE_URL');
    // Loading the CLI through tsx is most of this; the database wait itself is bounded below.
    expect(ms).to.be.below(15000);
  });

  it('gives up on a database that accepts connections but never answers after 1 s', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const started = Date.now();
    try {
      const e = await probeDatabase(`postgres://postgres@127.0.0.1:${port}/none`, 1000).then(
        () => null,
        (x: Error) => x,
      );
      expect(e?.message).to.match(/timeout/i);
      expect(Date.now() - started).to.be.within(900, 3000);
    } finally {
      silent.close();
    }
  });
});
