import { expect } from 'chai';
import fc from 'fast-check';
import { getContext, isolatedContext } from '../helpers/context';
import { apiRoutes } from '../../src/routes';
import { fullPath } from '../../src/http/openapi';
import type { RouteDef } from '../../src/http/route';
import { fromSchema, mutateObject, paramArb, queryArb, rawHostileBody, wrongValue } from './arbitraries';
import {
  buildWorld,
  CODE_RE,
  ensureCommunity,
  pathFor,
  rawRequest,
  RawResponse,
  realField,
  realParam,
  rowState,
  stateDiff,
  STACK_RE,
  World,
} from './world';

/**
 * Route-generic fuzzing: for every route of apiRoutes() (the OpenAPI document's routes), requests
 * derived from its JSON schemas (valid-ish, boundary, hostile) with credentials that pass auth.
 * Asserts: no 5xx, every error in the envelope with an UPPER_SNAKE code, no stack trace or source
 * path in any body, no prototype pollution, and no row written or changed by a rejected request.
 */
const CASES = Number(process.env.FUZZ_CASES || 200);
const BATCH = Number(process.env.FUZZ_BATCH || 20);
const SEED = Number(process.env.FUZZ_SEED || Date.now() % 2 ** 31);

interface Case {
  params: Record<string, string>;
  query: string;
  body?: { text: string; contentType: string; contentEncoding?: string };
  cred: 'key' | 'session' | 'none' | 'key-public';
  agent: number;
  ip: number;
}

function caseArb(route: RouteDef, w: World): fc.Arbitrary<Case> {
  const hints = (n: string) => realField(n, w);
  const paramNames = [...fullPath(route).matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const params = fc.record(
    Object.fromEntries(paramNames.map((n) => [n, paramArb(realParam(route, n, w))])),
  ) as fc.Arbitrary<Record<string, string>>;
  const query = route.query
    ? queryArb(route.query, hints)
    : fc.oneof({ weight: 5, arbitrary: fc.constant('') }, { weight: 1, arbitrary: queryArb(null, hints) });
  const json = (v: unknown) => ({ text: JSON.stringify(v) ?? 'null', contentType: 'application/json' });
  let body: fc.Arbitrary<Case['body']>;
  if (route.body) {
    const valid = fromSchema(route.body, hints);
    body = fc.oneof(
      { weight: 3, arbitrary: valid.map(json) },
      { weight: 4, arbitrary: mutateObject(valid, route.body).map(json) },
      { weight: 1, arbitrary: wrongValue.map(json) },
      {
        weight: 1,
        arbitrary: rawHostileBody.map((r) => ({
          text: r.body,
          contentType: r.contentType,
          contentEncoding: r.contentEncoding,
        })),
      },
    );
  } else {
    body = fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: wrongValue.map(json) },
      {
        weight: 1,
        arbitrary: rawHostileBody.map((r) => ({
          text: r.body,
          contentType: r.contentType,
          contentEncoding: r.contentEncoding,
        })),
      },
    );
  }
  const cred: fc.Arbitrary<Case['cred']> =
    route.auth === 'key'
      ? fc.constant('key')
      : route.auth === 'session'
        ? fc.constant('session')
        : route.auth === 'keyOrSession'
          ? fc.constantFrom('key', 'session')
          : fc.constantFrom('none', 'none', 'none', 'key-public');
  return fc.record({
    params,
    query,
    body,
    cred,
    agent: fc.nat({ max: w.mine.length - 1 }),
    ip: fc.integer({ min: 2, max: 254 }),
  });
}

function headersFor(c: Case, route: RouteDef, w: World): Record<string, string> {
  const h: Record<string, string> = {};
  if (c.body) h['content-type'] = c.body.contentType;
  if (c.body?.contentEncoding) h['content-encoding'] = c.body.contentEncoding;
  if (c.cred === 'key' || c.cred === 'key-public')
    h.authorization = `Bearer ${route.path.includes('claim-token') ? w.unowned.key : w.mine[c.agent].key}`;
  if (c.cred === 'session') {
    h.cookie = `svc_session=${w.owner.session.cookie}`;
    h['x-csrf-token'] = w.owner.session.csrfToken;
  }
  return h;
}

describe('fuzz: every API route under generated, boundary and hostile input', function () {
  this.timeout(120_000);
  let community: string;
  const stats = {
    requests: 0,
    byStatus: new Map<number, number>(),
    rejectedBatchesChecked: 0,
    rejectedWrites: 0,
    rejectedWritesChecked: 0,
    sentAgain: 0,
    readRoutesChecked: 0,
    maxMs: 0,
  };

  // Its own database: the row check's cost grows with every row the rest of the suite wrote.
  const own = isolatedContext();
  before(async function () {
    this.timeout(60_000);
    await own.before();
    community = await ensureCommunity();
  });

  after(async function () {
    this.timeout(30_000);
    await own.after();
    const statuses = [...stats.byStatus.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(' ');
    console.log(
      `      fuzz seed ${SEED}: ${stats.requests} requests, statuses ${statuses}, slowest ${stats.maxMs} ms; ${stats.rejectedWritesChecked} of ${stats.rejectedWrites} rejected write requests ` +
        `shown to write nothing (${stats.rejectedBatchesChecked} all-rejected batches, the rest sent again without their batch's successes: ${stats.sentAgain} requests), ${stats.readRoutesChecked} read routes wrote nothing`,
    );
  });

  it('fuzzes every operation of the served OpenAPI document, at least 200 cases each', async () => {
    const ctx = await getContext();
    const doc = await rawRequest(ctx.baseUrl, { method: 'GET', path: '/api/v1/openapi.json' });
    expect(doc.status).to.equal(200);
    const served = Object.entries<Record<string, unknown>>(doc.body.paths).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((m) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(m))
        .map((m) => `${m.toUpperCase()} ${p}`),
    );
    const fuzzed = apiRoutes().map(
      (r) => `${r.method.toUpperCase()} ${fullPath(r).replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`,
    );
    expect(served.length).to.be.greaterThan(40);
    expect([...fuzzed].sort()).to.deep.equal([...served].sort());
    // FUZZ_CASES may lower the count for a local run, never in CI.
    expect(CASES, 'cases per route').to.be.at.least(process.env.FUZZ_CASES && !process.env.CI ? 1 : 200);
  });

  for (const route of apiRoutes()) {
    const name = `${route.method.toUpperCase()} ${fullPath(route)}`;
    it(`${name}: ${CASES} cases, no 5xx, envelope errors, no stack, no write on rejection`, async () => {
      const ctx = await getContext();
      const w = await buildWorld(community);
      const cases = fc.sample(caseArb(route, w), { numRuns: CASES, seed: SEED ^ hash(name) });
      expect(cases.length).to.equal(CASES);
      const unsafe = route.method !== 'get';
      const send = (batch: Case[]) =>
        Promise.all(
          batch.map((c) => {
            const qs = c.query ? `?${c.query}` : '';
            return rawRequest(ctx.baseUrl, {
              method: route.method.toUpperCase(),
              path: pathFor(route, c.params) + qs,
              headers: headersFor(c, route, w),
              body: c.body?.text,
              localAddress: `127.0.0.${c.ip}`,
            }).then((res) => ({ c, res }));
          }),
        );
      const check = ({ c, res }: { c: Case; res: RawResponse }) => {
        stats.maxMs = Math.max(stats.maxMs, res.ms);
        const where = `${name} seed=${SEED} case=${JSON.stringify({ ...c, body: c.body && { ...c.body, text: c.body.text.slice(0, 300) } }).slice(0, 800)} → ${res.status} ${res.text.slice(0, 400)}`;
        expect(res.status, where).to.be.below(500);
        expect(STACK_RE.test(res.text), `stack or source path in body: ${where}`).to.equal(false);
        if (res.status >= 400) {
          expect(res.body?.error, where).to.be.an('object');
          expect(res.body.error.code, where).to.match(CODE_RE);
          expect(res.body.error.message, where).to.be.a('string');
          if (res.status === 429) expect(Number(res.headers['retry-after']), where).to.be.at.least(1);
        } else if (
          res.status !== 204 &&
          !route.root &&
          route.path !== '/openapi.json' &&
          res.headers['content-type']?.includes('json')
        ) {
          // Success bodies are the { data } envelope (the manifest and OpenAPI document are documents of their own).
          expect(res.body, where).to.have.property('data');
        }
      };
      // Reads are checked once over the whole route; writes per batch (a batch with a 2xx may write).
      const routeBefore = unsafe ? null : await rowState();
      for (let i = 0; i < cases.length; i += BATCH) {
        const batch = cases.slice(i, i + BATCH);
        const before = unsafe ? await rowState() : null;
        const results = await send(batch);
        for (const r of results) {
          stats.requests++;
          stats.byStatus.set(r.res.status, (stats.byStatus.get(r.res.status) ?? 0) + 1);
          check(r);
        }
        expect(({} as any).polluted, `prototype polluted after ${name}`).to.equal(undefined);
        if (!before) continue;
        // No write on a rejected request: a batch that was all rejected is compared as a whole; the
        // rejected requests of a batch with a success (which may write) are sent again as a batch of
        // their own, and again without any that now succeed, until a round is all rejected.
        stats.rejectedWrites += results.filter(({ res }) => res.status >= 400).length;
        let round = results;
        let state = before;
        for (;;) {
          const rejected = round.filter(({ res }) => res.status >= 400).map(({ c }) => c);
          if (!rejected.length) break;
          if (rejected.length === round.length) {
            expect(
              stateDiff(state, await rowState()),
              `${name}: rows written by rejected requests (seed ${SEED}, batch ${i / BATCH}${round === results ? '' : ', sent again'})`,
            ).to.equal('');
            if (round === results) stats.rejectedBatchesChecked++;
            stats.rejectedWritesChecked += rejected.length;
            break;
          }
          state = await rowState();
          round = await send(rejected);
          stats.sentAgain += round.length;
          for (const r of round) check(r);
          expect(({} as any).polluted, `prototype polluted after ${name}`).to.equal(undefined);
        }
      }
      if (routeBefore) {
        expect(stateDiff(routeBefore, await rowState()), `${name}: rows written by reads (seed ${SEED})`).to.equal('');
        stats.readRoutesChecked++;
      }
    });
  }
});

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}
