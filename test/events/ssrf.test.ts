import http from 'http';
import type { AddressInfo } from 'net';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { createApp } from '../../src/app';
import type { Deps } from '../../src/deps';
import { checkUrlSyntax, checkWebhookUrl, isForbiddenAddress, parseIPv4Loose, Resolver } from '../../src/webhooks/ssrf';
import { postWebhook } from '../../src/webhooks/outbound-http';
import { deliverOnce } from '../../src/webhooks/delivery';
import { clockDeps, deliveryIdsOf, emitAndDeliver, ownerAgentWebhook, Receiver, takeJobs } from './helpers';

const OFF = { allowPrivate: false };

/** Hosts written as addresses, in every spelling a URL parser or inet_aton accepts. */
const FORBIDDEN_HOSTS: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback range'],
  ['2130706433', 'decimal loopback'],
  ['0x7f000001', 'hex loopback'],
  ['0177.0.0.1', 'octal loopback'],
  ['127.1', 'short form loopback'],
  ['0x7f.1', 'mixed hex short form'],
  ['0.0.0.0', 'this network'],
  ['0', 'zero as a number'],
  ['10.0.0.1', 'private 10/8'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12 end'],
  ['192.168.1.1', 'private 192.168/16'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['100.64.0.1', 'CGNAT'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast SSDP'],
  ['255.255.255.255', 'broadcast'],
  ['198.18.0.1', 'benchmarking'],
  ['[::1]', 'IPv6 loopback'],
  ['[::]', 'IPv6 unspecified'],
  ['[::ffff:127.0.0.1]', 'IPv4-mapped loopback'],
  ['[::ffff:7f00:1]', 'IPv4-mapped loopback, hex'],
  ['[::ffff:10.1.2.3]', 'IPv4-mapped private'],
  ['[::ffff:0:7f00:1]', 'IPv4-translated loopback (SIIT)'],
  ['[::ffff:0:192.168.1.1]', 'IPv4-translated private'],
  ['[fe80::1]', 'IPv6 link-local'],
  ['[fc00::1]', 'IPv6 unique local'],
  ['[fd12:3456::1]', 'IPv6 unique local fd'],
  ['[ff02::1]', 'IPv6 multicast'],
  ['[64:ff9b::a9fe:a9fe]', 'NAT64 of link-local'],
  ['[2002:7f00:1::1]', '6to4 of loopback'],
  ['[64:ff9b:1::a9fe:a9fe]', 'local-use NAT64 (RFC 8215)'],
  ['[64:ff9b:1:ffff::808:808]', 'local-use NAT64, any mapping'],
  ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]', 'Teredo'],
  ['192.88.99.1', 'former 6to4 relay anycast'],
];

const PUBLIC_HOSTS = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '100.128.0.1',
  '192.88.100.1',
  '[2606:4700:4700::1111]',
  '[::ffff:8.8.8.8]',
  '[::ffff:0:8.8.8.8]',
  '[2001:4860:4860::8888]',
  '[64:ff9b:2::1]',
];

describe('webhook SSRF guard', () => {
  describe('pure address rules (switch off)', () => {
    for (const [host, why] of FORBIDDEN_HOSTS) {
      it(`refuses https://${host}/ (${why})`, () => {
        const r = checkUrlSyntax(`https://${host}/hook`, OFF);
        expect(r.ok).to.equal(false);
        if (!r.ok) expect(r.code).to.equal('WEBHOOK_URL_FORBIDDEN');
      });
    }
    it('accepts public addresses', () => {
      for (const h of PUBLIC_HOSTS) expect(checkUrlSyntax(`https://${h}/hook`, OFF).ok, h).to.equal(true);
    });
    it('classifies raw numeric host spellings without a URL parser', () => {
      expect(parseIPv4Loose('2130706433')).to.equal(0x7f000001);
      expect(parseIPv4Loose('0x7f000001')).to.equal(0x7f000001);
      expect(parseIPv4Loose('0177.0.0.1')).to.equal(0x7f000001);
      expect(parseIPv4Loose('127.1')).to.equal(0x7f000001);
      expect(parseIPv4Loose('256.1.1.1')).to.equal(null);
      expect(parseIPv4Loose('example.com')).to.equal(null);
      for (const h of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '::ffff:127.0.0.1', '::', '::1'])
        expect(isForbiddenAddress(h), h).to.equal(true);
      expect(isForbiddenAddress('example.com')).to.equal(false);
    });
    it('refuses http:// without the switch, accepts it with the switch', () => {
      const off = checkUrlSyntax('http://93.184.216.34/hook', OFF);
      expect(off.ok).to.equal(false);
      expect(checkUrlSyntax('http://127.0.0.1:8080/hook', { allowPrivate: true }).ok).to.equal(true);
    });
  });

  describe('resolution', () => {
    const resolver =
      (map: Record<string, string[] | Error>): Resolver =>
      async (host) => {
        const v = map[host];
        if (v instanceof Error) throw v;
        if (!v) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return v;
      };

    it('refuses names that resolve to a forbidden address (any of them), accepts public ones', async () => {
      const r = resolver({
        'evil.example': ['93.184.216.34', '10.0.0.5'],
        'meta.example': ['169.254.169.254'],
        'v6.example': ['::1'],
        'ok.example': ['93.184.216.34'],
      });
      for (const host of ['evil.example', 'meta.example', 'v6.example']) {
        const c = await checkWebhookUrl(`https://${host}/x`, OFF, r);
        expect(c.ok, host).to.equal(false);
      }
      expect((await checkWebhookUrl('https://ok.example/x', OFF, r)).ok).to.equal(true);
    });

    it('accepts a host that does not resolve at registration', async () => {
      const c = await checkWebhookUrl('https://nowhere.invalid/x', OFF, resolver({}));
      expect(c.ok).to.equal(true);
    });

    it('checks again at delivery: a name rebound to loopback after registration is refused, no request sent', async () => {
      const rx = await new Receiver().start();
      try {
        let answer = ['93.184.216.34'];
        const rebinding: Resolver = async () => answer;
        expect((await checkWebhookUrl(`https://rebind.example:${rx.port}/x`, OFF, rebinding)).ok).to.equal(true);
        answer = ['127.0.0.1'];
        const r = await postWebhook({
          url: `http://rebind.example:${rx.port}/x`,
          headers: {},
          body: '{}',
          guard: OFF,
          resolve: rebinding,
        });
        expect(r.ok).to.equal(false);
        expect(r.error).to.match(/WEBHOOK_URL_FORBIDDEN/);
        const r2 = await postWebhook({
          url: `https://rebind.example:${rx.port}/x`,
          headers: {},
          body: '{}',
          guard: OFF,
          resolve: rebinding,
        });
        expect(r2.error).to.match(/WEBHOOK_URL_FORBIDDEN/);
        expect(rx.received).to.have.length(0);
        // With the switch on, the same lookup connects to the checked address.
        const on = await postWebhook({
          url: `http://rebind.example:${rx.port}/x`,
          headers: {},
          body: '{}',
          guard: { allowPrivate: true },
          resolve: rebinding,
        });
        expect(on.ok).to.equal(true);
        expect(rx.received).to.have.length(1);
        expect(rx.received[0].headers.host).to.equal(`rebind.example:${rx.port}`);
      } finally {
        await rx.stop();
      }
    });

    it('a stored loopback URL is refused at delivery once the switch is off: failed attempt recorded, receiver untouched', async () => {
      const rx = await new Receiver().start();
      try {
        const s = await ownerAgentWebhook(rx.url());
        const clock = await clockDeps();
        const strict: Deps = { ...clock.deps, config: { ...clock.deps.config, webhookAllowPrivate: false } };
        // The first attempt (made by the fan-out) and the retry (a delivery job) are both refused.
        expect((await emitAndDeliver(s.agent.agent.id, { deps: strict })).outcomes).to.deep.equal(['retrying']);
        const ids = await deliveryIdsOf(s.webhook.id);
        await takeJobs('webhook_deliver', (p) => ids.has(p.deliveryId));
        expect(await deliverOnce(strict, { deliveryId: [...ids][0], step: 2 })).to.equal('retrying');
        expect(rx.received).to.have.length(0);
        const ctx = await getContext();
        const a = await ctx
          .db('webhook_delivery_attempts')
          .where({ delivery_id: [...ids][0] })
          .orderBy('attempt');
        expect(a.map((x) => x.attempt)).to.deep.equal([1, 2]);
        for (const x of a) expect(x.error).to.match(/WEBHOOK_URL_FORBIDDEN/);
      } finally {
        await rx.stop();
      }
    });
  });

  describe('registration through the API with WEBHOOK_ALLOW_PRIVATE off', () => {
    let server: http.Server;
    let base: string;
    before(async () => {
      const ctx = await getContext();
      const deps: Deps = { ...ctx.deps, config: { ...ctx.config, webhookAllowPrivate: false } };
      server = http.createServer(createApp(deps).callback());
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    });
    after(async () => {
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    });

    it('refuses ≥ 12 forbidden destinations with 400 WEBHOOK_URL_FORBIDDEN and stores nothing', async () => {
      const owner = await newOwner();
      const a = await newAgent({ owner });
      const headers = {
        'content-type': 'application/json',
        cookie: `svc_session=${owner.session.cookie}`,
        'x-csrf-token': owner.session.csrfToken,
      };
      const urls = [
        'http://93.184.216.34/hook',
        'https://localhost/hook',
        ...FORBIDDEN_HOSTS.map(([h]) => `https://${h}/hook`),
      ];
      expect(urls.length).to.be.greaterThanOrEqual(12);
      for (const url of urls) {
        const res = await fetch(`${base}/owner/agents/${a.agent.id}/webhooks`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ url }),
        });
        const body: any = await res.json();
        expect(res.status, url).to.equal(400);
        expect(body.error.code, url).to.equal('WEBHOOK_URL_FORBIDDEN');
      }
      const ok = await fetch(`${base}/owner/agents/${a.agent.id}/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: 'https://93.184.216.34/hook' }),
      });
      expect(ok.status).to.equal(201);
      const ctx = await getContext();
      expect(await ctx.db('webhooks').where({ agent_id: a.agent.id })).to.have.length(1);
    });
  });
});
