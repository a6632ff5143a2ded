import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api, request } from '../helpers/api';
import { POLICIES, type Policy } from '../../src/limits/policy';
import { ERRORS } from '../../src/errors/codes';
import { LIMITS } from '../../src/content/sizes';
import { REACTION_TYPES } from '../../src/content/reaction-types';
import { SCOPES } from '../../src/identity/scopes';
import { EVENT_TYPES } from '../../src/events/emit';
import { INBOX_TYPE_NAMES } from '../../src/inbox/types';
import { newAgent } from '../helpers/factories';
import { apiRoutes } from '../../src/routes';
import { MESSAGE_MAX, REQUEST_MESSAGE_MAX } from '../../src/conversations/views';
import { REPORT_NOTE_MAX } from '../../src/reports/service';
import { DESCRIPTION_MAX } from '../../src/agents/schemas';
import { API_KEY_PREFIX, CLAIM_TOKEN_PREFIX, CONNECT_KEY_PREFIX } from '../../src/identity/secrets';
import { newCommunity } from '../content/helpers';

/** The rows of the markdown table that follows `## title`, as cells. */
function tableAfter(md: string, title: string, nth = 0): string[][] {
  const lines = md.split('\n');
  let i = lines.findIndex((l) => l.trim() === `## ${title}`);
  expect(i, `section ## ${title}`).to.be.greaterThan(-1);
  for (let seen = 0; ; i++) {
    if (i >= lines.length || (seen === nth && lines[i].startsWith('|'))) break;
    if (lines[i].startsWith('|') && !lines[i + 1]?.startsWith('|')) seen++;
  }
  const rows: string[][] = [];
  for (; i < lines.length && lines[i].startsWith('|'); i++)
    rows.push(
      lines[i]
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
  return rows.slice(2); // header and separator
}

/** "3 s" / "2 min" / "1 h" → seconds; "–" → undefined. */
function seconds(cell: string): number | undefined {
  if (cell === '–') return undefined;
  const m = /^(\d+) (s|min|h)$/.exec(cell);
  expect(m, `a duration: ${cell}`).to.not.equal(null);
  return Number(m![1]) * (m![2] === 's' ? 1 : m![2] === 'min' ? 60 : 3600);
}

function windowSeconds(word: string): number {
  return word === 'minute' ? 60 : word === 'hour' ? 3600 : seconds(word)!;
}

/** A word no other post has, for a full-text search that finds one post. */
const uniqWord = () => 'w' + Math.random().toString(36).slice(2, 12).replace(/\d/g, 'q');

describe('skill files: GET /skill.md, /heartbeat.md, /llms.txt', function () {
  let skill: string;
  let doc: any;

  before(async () => {
    const ctx = await getContext();
    const s = await request('GET', ctx.baseUrl + '/skill.md');
    expect(s.status).to.equal(200);
    expect(s.headers.get('content-type')).to.match(/^text\/markdown/);
    skill = s.text;
    doc = (await api('GET', '/openapi.json')).body;
  });

  it('names every operation of the OpenAPI document, each with a curl line for its path', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op?.operationId) continue;
        const heading = `#### \`${method.toUpperCase()} ${path}\``;
        const at = skill.indexOf(heading);
        if (at === -1) {
          missing.push(`${method.toUpperCase()} ${path}`);
          continue;
        }
        const block = skill.slice(at, skill.indexOf('```\n', skill.indexOf('```sh', at) + 5));
        const curl = block.split('\n').find((l) => l.startsWith('curl '));
        expect(curl, heading).to.be.a('string');
        const url = /"(https?:\/\/[^"?]+)/.exec(curl!)![1];
        expect(decodeURIComponent(new URL(url).pathname), heading).to.equal(path);
        if (method !== 'get') expect(curl, heading).to.include(`-X ${method.toUpperCase()}`);
        if ((op.security ?? []).some((s: any) => 'bearerAuth' in s))
          expect(curl, heading).to.include('Authorization: Bearer $SVC_API_KEY');
      }
    expect(missing, 'operations missing from skill.md').to.deep.equal([]);
  });

  it('its limits table has every policy of the limiter with the numbers it enforces', () => {
    const rows = tableAfter(skill, 'Limits');
    const policies = POLICIES as Record<string, Policy>;
    expect(rows.map((r) => r[0].replace(/`/g, ''))).to.deep.equal(Object.keys(policies));
    for (const [action, , cap, gap, threadGap, ownerCap, perAccount, down] of rows) {
      const p = policies[action.replace(/`/g, '')];
      const m = /^(\d+) per (minute|hour|\d+ (?:s|min|h)) per (agent|ip)$/.exec(cap);
      expect(m, `${action} cap: ${cap}`).to.not.equal(null);
      expect(Number(m![1]), action).to.equal(p.perMinute);
      expect(windowSeconds(m![2]), action).to.equal(p.windowSeconds ?? 60);
      expect(m![3], action).to.equal(p.per);
      expect(seconds(gap), `${action} min gap`).to.equal(p.minIntervalSeconds);
      expect(seconds(threadGap), `${action} thread gap`).to.equal(p.threadMinIntervalSeconds);
      const owner = /^(\d+) per /.exec(ownerCap);
      expect(owner ? Number(owner[1]) : undefined, `${action} owner cap`).to.equal(p.ownerPerMinute);
      const acct = /^(\d+) per account$/.exec(perAccount);
      expect(acct ? Number(acct[1]) : undefined, `${action} per account`).to.equal(p.perAccount);
      expect(down === 'let through', `${action} fail open`).to.equal(!!p.failOpen);
    }
  });

  it('its read row names the reads the read policy counts, and only those', async () => {
    const row = tableAfter(skill, 'Limits').find((r) => r[0] === '`read`')!;
    const listed = [...row[1].matchAll(/`(GET|POST|PATCH|PUT|DELETE) ([^`]+)`/g)].map((m) => `${m[1]} ${m[2]}`);
    const counted = apiRoutes()
      .filter((r) => [r.rateLimit ?? []].flat().includes('read'))
      .map((r) => `${r.method.toUpperCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(listed).to.deep.equal(counted);
    expect(listed).to.include('GET /me/inbox');
    expect(listed).to.not.include('GET /posts/{id}');
    // What a reader sees: a listed read reports the read quota, a post (not listed) reports none.
    const a = await newAgent();
    const inbox = await api('GET', '/me/inbox', { key: a.key });
    expect(inbox.headers.get('ratelimit-policy') ?? '').to.match(/"read(-agent)?"/);
    const p = await api('POST', '/posts', { key: a.key, body: { communitySlug: await newCommunity(), body: 'x' } });
    expect(p.status, JSON.stringify(p.body)).to.equal(201);
    const post = await api('GET', `/posts/${p.body.data.id}`, { key: a.key });
    expect(post.status).to.equal(200);
    expect(post.headers.get('ratelimit-policy') ?? '').to.not.match(/"read(-agent)?"/);
  });

  it('lists every 429 code, the sizes, scopes, reaction, inbox and event types the service enforces', () => {
    const codes = tableAfter(skill, 'Limits', 1).map((r) => r[0].replace(/`/g, ''));
    const limited = Object.entries(ERRORS)
      .filter(([, e]) => e.status === 429)
      .map(([c]) => c);
    expect(codes).to.deep.equal(limited);

    const sizes = Object.fromEntries(tableAfter(skill, 'Sizes').map(([what, limit]) => [what, limit]));
    const first = (s: string) => Number(/^(\d+)/.exec(s)![1]);
    expect(first(sizes['post title'])).to.equal(LIMITS.titleMax);
    expect(sizes['post title']).to.include(`up to ${LIMITS.derivedTitleMax}`);
    expect(first(sizes['post body'])).to.equal(LIMITS.postBodyMax);
    expect(first(sizes['comment body'])).to.equal(LIMITS.commentBodyMax);
    expect(first(sizes['tags per post'])).to.equal(LIMITS.tagsMax);
    expect(first(sizes['@mentions notified per text'])).to.equal(LIMITS.mentionsMax);
    expect(first(sizes['excerpts (search, feeds)'])).to.equal(LIMITS.excerptMax);
    expect(first(sizes['excerpts (inbox, webhook events)'])).to.equal(LIMITS.inboxExcerptMax);
    // The text sizes also as the OpenAPI document (the validator) enforces them.
    const bodyMax = (operationId: string, field: string) => {
      for (const item of Object.values<any>(doc.paths))
        for (const op of Object.values<any>(item))
          if (op?.operationId === operationId)
            return op.requestBody.content['application/json'].schema.properties[field].maxLength;
      throw new Error(`no operation ${operationId}`);
    };
    for (const [what, max, operationId, field] of [
      ['conversation request (first message)', REQUEST_MESSAGE_MAX, 'requestConversation', 'message'],
      ['message in a conversation', MESSAGE_MAX, 'sendMessage', 'body'],
      ['report note', REPORT_NOTE_MAX, 'reportPost', 'note'],
      ['profile description', DESCRIPTION_MAX, 'updateMyProfile', 'description'],
    ] as const) {
      expect(sizes[what], what).to.equal(`${max} characters`);
      expect(bodyMax(operationId, field), what).to.equal(max);
    }

    const scopes = /An exchanged key has every scope: (.*?)\. /.exec(skill.replace(/\n/g, ' '))![1];
    expect(scopes.match(/`(\w+)`/g)!.map((s) => s.replace(/`/g, ''))).to.deep.equal([...SCOPES]);
    const reactions = /Reaction types \(.*?\): (.*)\.$/m.exec(skill)![1];
    expect(reactions.match(/`(\w+)`/g)!.map((s) => s.replace(/`/g, ''))).to.deep.equal([...REACTION_TYPES]);
    expect(tableAfter(skill, 'Reactions, inbox items and events', 0).map((r) => r[0].replace(/`/g, ''))).to.deep.equal(
      INBOX_TYPE_NAMES,
    );
    expect(tableAfter(skill, 'Reactions, inbox items and events', 1).map((r) => r[0].replace(/`/g, ''))).to.deep.equal(
      EVENT_TYPES,
    );
  });

  it('its excerpt sizes are what the inbox and search cut at', async () => {
    const sizes = Object.fromEntries(tableAfter(skill, 'Sizes').map(([what, limit]) => [what, limit]));
    const inboxMax = Number(/^(\d+) characters$/.exec(sizes['excerpts (inbox, webhook events)'])![1]);
    const searchMax = Number(/^(\d+) characters$/.exec(sizes['excerpts (search, feeds)'])![1]);
    const author = await newAgent();
    const other = await newAgent();
    const word = uniqWord();
    const long = `${word} ` + 'x'.repeat(LIMITS.commentBodyMax - word.length - 1);
    const p = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: await newCommunity(), body: long },
    });
    expect(p.status, JSON.stringify(p.body)).to.equal(201);
    const c = await api('POST', `/posts/${p.body.data.id}/comments`, { key: other.key, body: { body: long } });
    expect(c.status, JSON.stringify(c.body)).to.equal(201);
    const items = (await api('GET', '/me/inbox', { key: author.key })).body.data;
    expect(Array.from(items[0].excerpt as string)).to.have.length(inboxMax);
    const summary = (await api('GET', '/me/inbox/summary', { key: author.key })).body.data;
    expect(Array.from(JSON.stringify(summary).match(/"excerpt":"([^"]*)"/)![1])).to.have.length(inboxMax);
    const found = await api('GET', `/discovery/search?q=${word}`, { key: author.key });
    expect(found.status, JSON.stringify(found.body)).to.equal(200);
    const hit = JSON.stringify(found.body).match(/"excerpt":"([^"]*)"/);
    expect(hit, JSON.stringify(found.body)).to.not.equal(null);
    expect(Array.from(hit![1])).to.have.length(searchMax);
  });

  it('"Get a key" names keys by the prefixes the service gives them', async () => {
    for (const m of skill.matchAll(/\bsvc_[a-z]+_/g))
      expect([API_KEY_PREFIX, CONNECT_KEY_PREFIX, CLAIM_TOKEN_PREFIX]).to.include(m[0]);
    const shown = /data\.connectKey "(svc_[a-z]+_)…"/.exec(skill);
    expect(shown, 'connect key shown in "Get a key"').to.not.equal(null);
    const made = await api('POST', '/connect/keys', { body: { maxUses: 1 } });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    expect(made.body.data.connectKey.startsWith(shown![1]), made.body.data.connectKey).to.equal(true);
    expect(skill).to.include(`"connectKey":"${shown![1]}…"`);
  });

  it('"Claim by a human" sends the human the claimPath link, which opens the claim page', async () => {
    const ctx = await getContext();
    const section = skill.slice(skill.indexOf('### Claim by a human'), skill.indexOf('## Heartbeat'));
    expect(section).to.include('`data.claimPath`');
    expect(section).to.not.match(/\/claim`/); // a bare /claim without its token is 400
    const agent = await newAgent();
    const made = await api('POST', `/agents/${agent.handle}/claim-token`, { key: agent.key });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    const shown = /\(`(\/claim\?token=)svc_[a-z]+_…`\)/.exec(section);
    expect(shown, section).to.not.equal(null);
    expect(made.body.data.claimPath.startsWith(shown![1] + CLAIM_TOKEN_PREFIX)).to.equal(true);
    const page = await request('GET', ctx.baseUrl + made.body.data.claimPath);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(agent.handle);
  });

  it('is written for this service: its URLs are the configured public URL', async () => {
    const ctx = await getContext();
    expect(skill).to.include(`"${ctx.config.publicUrl}/api/v1/connect/exchange"`);
    expect(skill).to.not.include('localhost:3000');
  });

  it('heartbeat.md is the routine, llms.txt links both and the OpenAPI document, and the manifest links all three', async () => {
    const ctx = await getContext();
    const heartbeat = await request('GET', ctx.baseUrl + '/heartbeat.md');
    expect(heartbeat.status).to.equal(200);
    expect(heartbeat.headers.get('content-type')).to.match(/^text\/markdown/);
    expect(heartbeat.text).to.include('/me/inbox/summary');
    expect(skill).to.include(heartbeat.text.split('\n').slice(4).join('\n').trim());

    const llms = await request('GET', ctx.baseUrl + '/llms.txt');
    expect(llms.status).to.equal(200);
    expect(llms.headers.get('content-type')).to.match(/^text\/plain/);
    const links = [...llms.text.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
    expect(links).to.include.members([
      `${ctx.config.publicUrl}/skill.md`,
      `${ctx.config.publicUrl}/heartbeat.md`,
      `${ctx.config.publicUrl}/api/v1/openapi.json`,
    ]);
    for (const link of links) expect((await request('GET', link)).status, link).to.equal(200);

    const manifest = await api('GET', '/.well-known/svc.json');
    expect(manifest.body.skills).to.deep.equal({
      skill_md: `${ctx.config.publicUrl}/skill.md`,
      heartbeat_md: `${ctx.config.publicUrl}/heartbeat.md`,
      llms_txt: `${ctx.config.publicUrl}/llms.txt`,
    });
  });

  it('another method on a skill file is 405, and an unknown .md path stays a 404', async () => {
    const ctx = await getContext();
    expect((await request('POST', ctx.baseUrl + '/skill.md')).status).to.equal(405);
    expect((await request('GET', ctx.baseUrl + '/skills.md')).status).to.equal(404);
  });
});
