import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, uniq } from '../helpers/factories';
import { createAgent } from '../../src/identity/service';
import { communityCommands } from '../../src/communities/cli';
import { createConnectKey } from '../../src/connect/service';
import { newCommunity, seedPost } from '../content/helpers';
import { WebClient } from '../web/client';

/** Every bidirectional control the names refuse, each alone in an otherwise ordinary name. */
const CONTROLS = [
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
];
const SPOOF = 'Support team \u202e';

function expectRefused(r: { status: number; body: any; text: string }, path: string) {
  expect(r.status, r.text).to.equal(400);
  expect(r.body.error.code).to.equal('VALIDATION_FAILED');
  expect(r.body.error.details.map((d: any) => d.path)).to.deep.equal([path]);
}

describe('names people read refuse bidirectional controls', () => {
  it('POST /owner/agents: displayName with any bidi control is 400 at body/displayName, no agent written', async () => {
    const { db } = await getContext();
    const { session } = await newOwner();
    for (const c of CONTROLS) {
      const handle = uniq('bidi');
      const r = await api('POST', '/owner/agents', { session, body: { handle, displayName: `Name ${c}x` } });
      expectRefused(r, 'body/displayName');
      expect(await db('agents').where({ handle }).first()).to.equal(undefined);
    }
    // Other scripts and invisible-but-harmless characters stay allowed.
    const ok = await api('POST', '/owner/agents', {
      session,
      body: { handle: uniq('rtl'), displayName: 'مرحبا שלום 日本' },
    });
    expect(ok.status, ok.text).to.equal(201);
  });

  it('POST /owner/signup: displayName is 400 at body/displayName, no owner written', async () => {
    const { db } = await getContext();
    const email = `${uniq('bidi')}@example.test`;
    const r = await api('POST', '/owner/signup', {
      body: { email, password: 'correct horse battery staple', displayName: SPOOF },
    });
    expectRefused(r, 'body/displayName');
    expect(await db('owners').where({ email }).first()).to.equal(undefined);
  });

  it('POST /owner/agents/{id}/keys: label is 400 at body/label, no key written', async () => {
    const { db } = await getContext();
    const owner = await newOwner();
    const { agent } = await newAgent({ owner });
    const before = await db('api_keys').where({ agent_id: agent.id }).count<{ count: string }[]>('* as count');
    const r = await api('POST', `/owner/agents/${agent.id}/keys`, {
      session: owner.session,
      body: { scopes: ['read'], label: 'ci \u2067runner' },
    });
    expectRefused(r, 'body/label');
    const after = await db('api_keys').where({ agent_id: agent.id }).count<{ count: string }[]>('* as count');
    expect(after[0].count).to.equal(before[0].count);
  });

  it('POST /connect/keys: runtimeLabel is 400 at body/runtimeLabel, no key written', async () => {
    const { db } = await getContext();
    const label = `laptop ${uniq('l')}\u202d`;
    const r = await api('POST', '/connect/keys', { body: { runtimeLabel: label } });
    expectRefused(r, 'body/runtimeLabel');
    expect(await db('connect_keys').where({ runtime_label: label }).first()).to.equal(undefined);
  });

  it('POST /connect/exchange: localDisplayName and source are 400 at their field, the key keeps its uses', async () => {
    const deps = (await getContext()).deps;
    const k = await createConnectKey(deps, { ownerId: null, maxUses: 2 });
    const base = { connectKey: k.connectKey, framework: 'mcp', localAgentId: uniq('local') };
    expectRefused(
      await api('POST', '/connect/exchange', { body: { ...base, localDisplayName: SPOOF } }),
      'body/localDisplayName',
    );
    expectRefused(await api('POST', '/connect/exchange', { body: { ...base, source: 'cli\u200f' } }), 'body/source');
    expect((await deps.db('connect_keys').where({ id: k.id }).first()).uses).to.equal(0);
  });

  it('a display name derived from localAgentId loses its bidi controls', async () => {
    const deps = (await getContext()).deps;
    const k = await createConnectKey(deps, { ownerId: null });
    const local = `bot\u202e${uniq('x')}`;
    const r = await api('POST', '/connect/exchange', {
      body: { connectKey: k.connectKey, framework: 'mcp', localAgentId: local },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.agent.displayName).to.equal(local.replace('\u202e', ''));
  });

  it('CLI create-community refuses a name with bidi controls with a clear error and writes nothing', async () => {
    const { db, deps } = await getContext();
    const cmd = communityCommands.find((c) => c.name === 'create-community')!;
    const slug = uniq('bidi').replace(/_/g, '-');
    let err: any;
    try {
      await cmd.run({ positional: [slug], flags: { name: 'Official \u202enews' } }, deps);
    } catch (e) {
      err = e;
    }
    expect(err?.code).to.equal('VALIDATION_FAILED');
    expect(err?.message).to.match(/bidirectional control/);
    expect(await db('communities').where({ slug }).first()).to.equal(undefined);
  });

  it('the OpenAPI document shows the rule on each name field', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    const body = (p: string, m: string) => doc.paths[p][m].requestBody.content['application/json'].schema.properties;
    const fields = [
      body('/api/v1/owner/agents', 'post').displayName,
      body('/api/v1/owner/signup', 'post').displayName,
      body('/api/v1/owner/agents/{id}/keys', 'post').label,
      body('/api/v1/connect/keys', 'post').runtimeLabel,
      body('/api/v1/connect/exchange', 'post').localDisplayName,
    ];
    for (const f of fields) {
      expect(f.pattern).to.be.a('string');
      expect(new RegExp(f.pattern, 'u').test(SPOOF)).to.equal(false);
      expect(new RegExp(f.pattern, 'u').test('Support team')).to.equal(true);
    }
  });
});

describe('pages isolate user-written names in <bdi>', () => {
  it('an older row with a bidi override cannot reorder the handle after it (profile, feed, post, community)', async () => {
    const { db } = await getContext();
    const handle = uniq('spoof');
    // Written straight to the table, as a row from before the rule would be.
    const agent = await createAgent(db, { handle, displayName: SPOOF, ownerId: null });
    const community = await newCommunity();
    await db('communities').where({ slug: community }).update({ name: 'News \u202e' });
    const postId = await seedPost({ authorId: agent.id, community, title: 'Title \u202eevil' });
    const web = new WebClient();
    const profile = await web.get(`/a/${handle}`);
    expect(profile.status).to.equal(200);
    expect(profile.text).to.include(`<bdi>${SPOOF}</bdi>`);
    expect(profile.text).to.include(`<bdi>@${handle}</bdi>`);
    const post = await web.get(`/p/${postId}`);
    expect(post.text).to.include(`<bdi>${SPOOF}</bdi>`);
    expect(post.text).to.include('<bdi>Title \u202eevil</bdi>');
    const feed = await web.get(`/c/${community}`);
    expect(feed.text).to.include(`<bdi>News \u202e</bdi>`);
    expect(feed.text).to.include(`<bdi>${SPOOF}</bdi>`);
    expect(feed.text).to.include('<bdi>Title \u202eevil</bdi>');
    // Nowhere does the name stand bare: each occurrence is inside a <bdi>.
    for (const page of [profile.text, post.text, feed.text]) {
      const bare = page.split(SPOOF).length - 1;
      const isolated = page.split(`<bdi>${SPOOF}</bdi>`).length - 1;
      expect(bare, 'every occurrence of the name is isolated').to.equal(isolated);
    }
  });
});
