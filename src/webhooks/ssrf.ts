import dns from 'dns';
import net from 'net';

/**
 * SSRF guard for webhook destinations. Pure classification of addresses and
 * host spellings, plus a resolver check used at registration and, through `guardedLookup`, by
 * the socket of every delivery attempt (the connection goes to the address that was checked, so
 * DNS rebinding between check and connect cannot slip through).
 */

export const WEBHOOK_URL_FORBIDDEN = 'WEBHOOK_URL_FORBIDDEN';

export interface GuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE: http and any address allowed (development and tests only). */
  allowPrivate: boolean;
}

export class ForbiddenDestinationError extends Error {
  readonly code = WEBHOOK_URL_FORBIDDEN;
}

/** [network, prefix length] of IPv4 ranges a webhook may never reach. */
const V4_BLOCKED: [number, number][] = [
  [0x00000000, 8], // 0.0.0.0/8 "this network"
  [0x0a000000, 8], // 10/8 private
  [0x64400000, 10], // 100.64/10 CGNAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local (cloud metadata)
  [0xac100000, 12], // 172.16/12 private
  [0xc0000000, 24], // 192.0.0/24 IETF protocol assignments
  [0xc0000200, 24], // 192.0.2/24 documentation
  [0xc0586300, 24], // 192.88.99/24 former 6to4 relay anycast
  [0xc0a80000, 16], // 192.168/16 private
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xc6336400, 24], // 198.51.100/24 documentation
  [0xcb007100, 24], // 203.0.113/24 documentation
  [0xe0000000, 4], // 224/4 multicast
  [0xf0000000, 4], // 240/4 reserved, includes 255.255.255.255 broadcast
  // Cloud instance-metadata and platform endpoints outside 169.254/16 (named even where a range
  // above already holds them, so narrowing a range never opens one):
  [0xa83f8110, 32], // 168.63.129.16 Azure WireServer / platform DNS
  [0x646464c8, 32], // 100.100.100.200 Alibaba Cloud metadata
  [0xc00000c0, 32], // 192.0.0.192 Oracle Cloud metadata
];

/** IPv6 metadata endpoints (inside fc00::/7, listed for the same reason). */
const V6_METADATA = ['fd00:ec2::254' /* AWS IMDS */, 'fd20:ce::254' /* Google Cloud metadata */].map((a) =>
  parseIPv6(a)!,
);

function v4InBlocked(n: number): boolean {
  return V4_BLOCKED.some(([net4, len]) => (len === 0 ? true : n >>> (32 - len) === net4 >>> (32 - len)));
}

/**
 * Parses IPv4 the way inet_aton (and WHATWG URL) does: 1 to 4 parts, each decimal, 0x-hex or
 * 0-octal, the last part filling the remaining bytes (127.1, 2130706433, 0x7f000001, 0177.0.0.1).
 * Returns the 32-bit value or null when the string is not such a number form.
 */
export function parseIPv4Loose(s: string): number | null {
  if (!s || s.length > 64) return null;
  const parts = s.split('.');
  if (parts.length > 4 || parts.some((p) => p === '')) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let v: number;
    if (/^0x[0-9a-f]*$/i.test(p)) v = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) v = parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) v = Number(p);
    else return null;
    if (!Number.isFinite(v)) return null;
    nums.push(v);
  }
  const last = nums[nums.length - 1];
  const lead = nums.slice(0, -1);
  if (lead.some((x) => x > 255)) return null;
  const rest = 4 - lead.length;
  if (last >= 2 ** (8 * rest)) return null;
  let n = 0;
  for (const x of lead) n = n * 256 + x;
  return n * 2 ** (8 * rest) + last;
}

/** 16 bytes of an IPv6 literal (with ::, embedded dotted IPv4, optional zone), or null. */
export function parseIPv6(s: string): number[] | null {
  const addr = s.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (net.isIPv6(addr) === false) return null;
  let head = addr;
  let v4tail: number[] = [];
  const m = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (m) {
    const v = parseIPv4Loose(m[2]);
    if (v === null) return null;
    v4tail = [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
    head = m[1].endsWith('::') ? m[1] : m[1].slice(0, -1);
  }
  const groupsWanted = 8 - v4tail.length / 2;
  const [l, r] = head.includes('::') ? head.split('::') : [head, null];
  const left = l ? l.split(':').filter((x) => x !== '') : [];
  const right = r ? r.split(':').filter((x) => x !== '') : [];
  const fill = r === null ? 0 : groupsWanted - left.length - right.length;
  const groups = [...left, ...Array(Math.max(0, fill)).fill('0'), ...right];
  if (groups.length !== groupsWanted) return null;
  const bytes: number[] = [];
  for (const g of groups) {
    const v = parseInt(g, 16);
    bytes.push((v >> 8) & 255, v & 255);
  }
  return [...bytes, ...v4tail];
}

function bytesToV4(b: number[], at: number): number {
  return ((b[at] << 24) >>> 0) + (b[at + 1] << 16) + (b[at + 2] << 8) + b[at + 3];
}

function v6Forbidden(b: number[]): boolean {
  if (V6_METADATA.some((m) => m.every((x, i) => x === b[i]))) return true;
  const zeroUpTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(15) && (b[15] === 0 || b[15] === 1)) return true; // :: and ::1
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) return v4InBlocked(bytesToV4(b, 12)); // ::ffff:a.b.c.d
  if (zeroUpTo(12)) return true; // deprecated IPv4-compatible ::a.b.c.d: never a public route
  if (zeroUpTo(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return v4InBlocked(bytesToV4(b, 12)); // IPv4-translated ::ffff:0:a.b.c.d (SIIT)
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) {
    return v4InBlocked(bytesToV4(b, 12)); // NAT64 64:ff9b::/96
  }
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b[4] === 0x00 && b[5] === 0x01) return true; // local-use NAT64 64:ff9b:1::/48 (RFC 8215): any site-chosen mapping, so none
  if (b[0] === 0x20 && b[1] === 0x02) return v4InBlocked(bytesToV4(b, 2)); // 6to4 2002::/16
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return true; // Teredo 2001::/32: tunnels to an embedded IPv4
  if (b[0] === 0x01 && b[1] === 0x00 && b.slice(2, 8).every((x) => x === 0)) return true; // 100::/64 discard
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return true; // 2001:db8::/32 documentation
  if ((b[0] & 0xfe) === 0xfc) return true; // fc00::/7 unique local
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return true; // fe80::/10 link-local
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return true; // fec0::/10 site-local (deprecated)
  if (b[0] === 0xff) return true; // ff00::/8 multicast
  return false;
}

/**
 * True when `host` (an IP literal in any spelling, or a resolved address) is one a webhook
 * must not reach. Names that are not addresses return false: resolve them first.
 */
export function isForbiddenAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (h.includes(':')) {
    const b = parseIPv6(h);
    return b === null ? true : v6Forbidden(b);
  }
  const v4 = parseIPv4Loose(h);
  return v4 === null ? false : v4InBlocked(v4);
}

/** True when the host is written as an address (any IPv4 number form, or IPv6). */
export function isAddressLiteral(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h.includes(':') ? parseIPv6(h) !== null : parseIPv4Loose(h) !== null;
}

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => {
  const rows = await dns.promises.lookup(host, { all: true, verbatim: true });
  return rows.map((r) => r.address);
};

/**
 * The one answer for every forbidden destination, written as an address or reached through a
 * name: a different answer for names would tell an owner which internal names resolve to
 * private addresses. What was forbidden goes to `detail`, for the server's log only.
 */
export const FORBIDDEN_DESTINATION =
  'webhook URLs must point at a public host: loopback, private, link-local, multicast, reserved and cloud metadata destinations are refused';

export type UrlCheck =
  | { ok: true; url: URL }
  | { ok: false; code: 'VALIDATION_FAILED' | typeof WEBHOOK_URL_FORBIDDEN; reason: string; detail?: string };

/** Syntax and scheme rules, no network: https only (http too with allowPrivate), no credentials. */
export function checkUrlSyntax(raw: string, opts: GuardOptions): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, code: 'VALIDATION_FAILED', reason: 'url is not a valid absolute URL' };
  }
  const schemes = opts.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    return { ok: false, code: WEBHOOK_URL_FORBIDDEN, reason: 'webhook URLs must use https' };
  if (url.username || url.password)
    return { ok: false, code: WEBHOOK_URL_FORBIDDEN, reason: 'webhook URLs must not carry credentials' };
  if (!url.hostname) return { ok: false, code: 'VALIDATION_FAILED', reason: 'url has no host' };
  if (!opts.allowPrivate && isForbiddenAddress(url.hostname)) {
    return {
      ok: false,
      code: WEBHOOK_URL_FORBIDDEN,
      reason: FORBIDDEN_DESTINATION,
      detail: `${url.hostname} is a forbidden address`,
    };
  }
  return { ok: true, url };
}

/**
 * Registration check: syntax, then the resolved addresses. A host that does not resolve is
 * accepted: every delivery attempt resolves and checks again.
 */
export async function checkWebhookUrl(
  raw: string,
  opts: GuardOptions,
  resolve: Resolver = systemResolver,
): Promise<UrlCheck> {
  const s = checkUrlSyntax(raw, opts);
  if (!s.ok || opts.allowPrivate || isAddressLiteral(s.url.hostname)) return s;
  let addrs: string[];
  try {
    addrs = await withTimeout(resolve(s.url.hostname), 3000);
  } catch {
    // Not resolvable now (or DNS slow): accepted; each delivery attempt checks again.
    return s;
  }
  const forbidden = addrs.filter(isForbiddenAddress);
  if (forbidden.length > 0) {
    return {
      ok: false,
      code: WEBHOOK_URL_FORBIDDEN,
      reason: FORBIDDEN_DESTINATION,
      detail: `${s.url.hostname} resolves to the forbidden address ${forbidden.join(', ')}`,
    };
  }
  return s;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(Object.assign(new Error('DNS timeout'), { code: 'ETIMEOUT' })), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http(s).request: resolves the name, refuses it when any address is forbidden,
 * and hands the socket the checked address, so the connection goes exactly where we checked.
 */
export function guardedLookup(opts: GuardOptions, resolve: Resolver = systemResolver) {
  return (hostname: string, options: dns.LookupOptions | number | undefined, cb: LookupCallback): void => {
    resolve(hostname).then(
      (addrs) => {
        if (addrs.length === 0)
          return cb(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), '', 4);
        if (!opts.allowPrivate && addrs.some(isForbiddenAddress)) {
          return cb(
            new ForbiddenDestinationError(`${hostname} resolves to a forbidden address`) as NodeJS.ErrnoException,
            '',
            4,
          );
        }
        const all = typeof options === 'object' && options?.all;
        const list = addrs.map((a) => ({ address: a, family: net.isIPv6(a) ? 6 : 4 }));
        if (all) cb(null, list);
        else cb(null, list[0].address, list[0].family);
      },
      (e) => cb(e, '', 4),
    );
  };
}
