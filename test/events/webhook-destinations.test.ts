import http from 'http';
import type { AddressInfo } from 'net';
import pino from 'pino';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { createApp } from '../../src/app';
import type { Deps } from '../../src/deps';
import { checkWebhookUrl, FORBIDDEN_DESTINATION, Resolver } from '../../src/webhooks/ssrf';
import { postWebhook } from '../../src/webhooks/outbound-http';

const OFF = { allowPrivate: false };

/** Cloud instance-metadata and platform addresses outside 169.254/16. */
const METADATA_V4: [string, number][] = [
  ['Azure WireServer', 0xa83f8110], // 168.63.129.16
  ['Alibaba Cloud metadata', 0x646464c8], // 100.100.100.200
  ['Oracle Cloud metadata', 0xc00000c0], // 192.0.0.192
];

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Every spelling of an IPv4 address a URL host may take: the URL parser reads them all as the address. */
function v4Forms(n: number): string[] {
  const b = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  const hex = (x: number) => x.toString(16);
  return [
    dotted(n),
    String(n), // one decimal number
    '0x' + hex(n), // one hex number
    b.map((x) => '0' + x.toString(8)).join('.'), // octal parts
    b.map((x) => '0x' + hex(x)).join('.'), // hex parts
    `${b[0]}.${b[1]}.${(b[2] << 8) + b[3]}`, // short form
    `[::ffff:${dotted(n)}]`, // IPv4-mapped IPv6
    `[::ffff:${hex(n >>> 16)}:${hex(n & 0xffff)}]`, // IPv4-mapped, hex groups
    `[::ffff:0:${dotted(n)}]`, // IPv4-translated (SIIT)
    `[64:ff9b::${dotted(n)}]`, // NAT64
    `[2002:${hex(n >>> 16)}:${hex(n & 0xffff)}::1]`, // 6to4
  ];
}

const METADATA_V6: [string, string[]][] = [
  ['AWS IMDS over IPv6', ['[fd00:ec2::254]', '[FD00:0EC2:0000:0000:0000:0000:0000:0254]', '[fd00:ec2:0:0:0:0:0:254]']],
  ['Google Cloud metadata over IPv6', ['[fd20:ce::254]']],
];

const FORMS: [string, string][] = [
  ...METADATA_V4.flatMap(([why, n]) => v4Forms(n).map((f): [string, string] => [f, why])),
  ...METADATA_V6.flatMap(([why, forms]) => forms.map((f): [string, string] => [f, why])),
];

/** What a resolver answers for each address (the canonical text of the address). */
const RESOLVED: string[] = [
  ...METADATA_V4.flatMap(([, n]) => [dotted(n), `::ffff:${dotted(n)}`]),
  'fd00:ec2::254',
  'fd20:ce::254',
];

const nothingResolves: Resolver = async () => {
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

describe('webhook destinations: cloud metadata addresses and one refusal for all', () => {
  describe('cloud metadata addresses beyond 169.254/16, in every form', () => {
    for (const [form, why] of FORMS) {
      it(`https://${form}/ (${why}) is refused at registration and at delivery`, async () => {
        const url = `https://${form}/hook`;
        const c = await checkWebhookUrl(url, OFF, nothingResolves);
        expect(c.ok, url).to.equal(false);
        if (!c.ok) {
          expect(c.code).to.equal('WEBHOOK_URL_FORBIDDEN');
          expect(c.reason).to.equal(FORBIDDEN_DESTINATION);
        }
        const d = await postWebhook({ url, headers: {}, body: '{}', guard: OFF, resolve: nothingResolves });
        expect(d.ok, url).to.equal(false);
        expect(d.error).to.match(/WEBHOOK_URL_FORBIDDEN/);
      });
    }

    for (const address of RESOLVED) {
      it(`a name resolving to ${address} is refused at registration and at delivery`, async () => {
        const resolve: Resolver = async () => ['93.184.216.34', address];
        const c = await checkWebhookUrl('https://meta.example/hook', OFF, resolve);
        expect(c.ok).to.equal(false);
        if (!c.ok) expect(c.reason).to.equal(FORBIDDEN_DESTINATION);
        const d = await postWebhook({
          url: 'https://meta.example/hook',
          headers: {},
          body: '{}',
          guard: OFF,
          resolve: async () => [address],
        });
        expect(d.ok).to.equal(false);
        expect(d.error).to.match(/WEBHOOK_URL_FORBIDDEN/);
      });
    }

    it('neighbours of the metadata addresses stay public', async () => {
      for (const host of ['168.63.129.15', '168.63.129.17', '192.0.1.192', '[2600:1f18::254]']) {
        const c = await checkWebhookUrl(`https://${host}/hook`, OFF, nothingResolves);
        expect(c.ok, host).to.equal(true);
      }
    });
  });

  describe('through the API with WEBHOOK_ALLOW_PRIVATE off', () => {
    let server: http.Server;
    let base: string;
    const logged: any[] = [];
    before(async () => {
      const ctx = await getContext();
      const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
      const deps: Deps = { ...ctx.deps, log, config: { ...ctx.config, webhookAllowPrivate: false } };
      server = http.createServer(createApp(deps).callback());
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    });
    after(async () => {
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    });

    // A name that resolves to loopback (localhost, from the hosts file) and literal addresses of
    // each kind: the owner cannot tell them apart.
    const FORBIDDEN_URLS = [
      'https://localhost/hook',
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://168.63.129.16/hook',
      'https://0xa83f8110/hook',
      'https://[fd00:ec2::254]/hook',
    ];

    it('every forbidden destination gets the same message at POST and PATCH; the detail is logged only', async () => {
      const owner = await newOwner();
      const a = await newAgent({ owner });
      const headers = {
        'content-type': 'application/json',
        cookie: `svc_session=${owner.session.cookie}`,
        'x-csrf-token': owner.session.csrfToken,
      };
      const hooks = `${base}/owner/agents/${a.agent.id}/webhooks`;
      const created = await fetch(hooks, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: 'https://93.184.216.34/hook' }),
      });
      expect(created.status).to.equal(201);
      const hookId = ((await created.json()) as any).data.id;
      const answers = new Set<string>();
      for (const url of FORBIDDEN_URLS) {
        for (const [method, target] of [
          ['POST', hooks],
          ['PATCH', `${hooks}/${hookId}`],
        ]) {
          const res = await fetch(target, { method, headers, body: JSON.stringify({ url }) });
          const body: any = await res.json();
          expect(res.status, `${method} ${url}`).to.equal(400);
          expect(body.error.code, `${method} ${url}`).to.equal('WEBHOOK_URL_FORBIDDEN');
          answers.add(JSON.stringify(body.error));
        }
      }
      expect([...answers]).to.deep.equal([
        JSON.stringify({ code: 'WEBHOOK_URL_FORBIDDEN', message: FORBIDDEN_DESTINATION }),
      ]);
      expect(FORBIDDEN_DESTINATION).to.not.match(/resolve/i);
      // Nothing stored: the one webhook keeps its URL.
      const ctx = await getContext();
      const rows = await ctx.db('webhooks').where({ agent_id: a.agent.id });
      expect(rows.map((r: any) => r.url)).to.deep.equal(['https://93.184.216.34/hook']);
      // The server's log says what was forbidden.
      const details = logged.filter((l) => l.msg === 'webhook destination refused').map((l) => l.detail);
      expect(details.some((d) => /^localhost resolves to the forbidden address /.test(d))).to.equal(true);
      expect(details).to.include('168.63.129.16 is a forbidden address');
    });
  });
});
