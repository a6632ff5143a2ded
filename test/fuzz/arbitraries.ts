import fc from 'fast-check';

/** Looks up a real value for a named field (resource ids, slugs, tokens); undefined: generate one. */
export type FieldHints = (name: string) => unknown;

const SPECIAL_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u202e\u0041\u200b',
  '💥🧨'.repeat(50),
  'Z̷̢͓̈́a̶̛͉l̵̰͝g̸̡͛o̴̧͝',
  '\ud800',
  '\uffff\ufffe',
  '%00%2e%2e%2f',
  '../../../../etc/passwd',
  "'; drop table agents; --",
  '" OR 1=1 --',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e309',
  'svc_live_' + 'A'.repeat(60),
  '@',
  '@@@',
  'a'.repeat(10_000),
  '\n\r\t\v\f',
];

/** Strings from every corner: ASCII, full unicode, lone surrogates, specials. */
/** Percent-encodes any string, lone surrogates included (as their replacement's UTF-8 bytes). */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...Buffer.from(s, 'utf8')].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
  }
}

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      maxLength: 20,
      unit: fc.constantFrom('\u0000', '\ud83d', '\ude00', '\u2028', '"', '\\', '/', '%'),
    }),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 60_000 }).map((n) => 'x'.repeat(n)) },
);

/** Nested arrays/objects, up to a few hundred levels. */
export const deepValue: fc.Arbitrary<unknown> = fc.integer({ min: 20, max: 400 }).chain((depth) =>
  fc.constantFrom('array', 'object', 'mixed').map((kind) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = kind === 'array' || (kind === 'mixed' && i % 2) ? [v] : { a: v };
    return v;
  }),
);

/** Keys that attack prototypes when merged naïvely. */
export const pollutionObject: fc.Arbitrary<unknown> = fc.constantFrom(
  JSON.parse('{"__proto__":{"polluted":"yes"}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":"yes"}}}'),
  JSON.parse('{"__proto__":null}'),
  JSON.parse('{"prototype":{"polluted":"yes"},"hasOwnProperty":1,"toString":"x","valueOf":null}'),
);

/** Any JSON value of the wrong kind: numbers, booleans, null, arrays, objects, specials. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, [], {}, [null], { '': '' }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  hostileString,
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null)), { maxLength: 10 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), { maxKeys: 5 }),
  deepValue,
  pollutionObject,
);

function stringArb(s: any, name: string | undefined, hints: FieldHints): fc.Arbitrary<string> {
  const real = name !== undefined ? hints(name) : undefined;
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 200, 200);
  const options: fc.Arbitrary<string>[] = [];
  if (typeof real === 'string') options.push(fc.constant(real), fc.constant(real), fc.constant(real));
  if (s.format === 'uuid') options.push(fc.uuid());
  else if (s.format === 'email') options.push(fc.emailAddress());
  else if (s.pattern) options.push(fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length <= 200));
  else options.push(fc.string({ minLength: min, maxLength: Math.max(min, max) }));
  // Boundaries: exactly the maximum and one past it, one under the minimum.
  if (s.maxLength !== undefined)
    options.push(fc.constant('m'.repeat(s.maxLength)), fc.constant('m'.repeat(s.maxLength + 1)));
  if (min > 0) options.push(fc.constant('m'.repeat(min - 1)));
  return fc.oneof(...options);
}

/** A value that mostly satisfies the JSON schema (with boundaries); real values where hinted. */
export function fromSchema(schema: any, hints: FieldHints, name?: string, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['string'];
  const arbs = types.map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number': {
        const min = schema.minimum ?? -1000;
        const max = schema.maximum ?? 1000;
        return fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min, max }) },
          { weight: 1, arbitrary: fc.constantFrom(min - 1, max + 1, min, max) },
        );
      }
      case 'array': {
        const maxItems = Math.min(schema.maxItems ?? 5, 8);
        return fc.oneof(
          {
            weight: 4,
            arbitrary: fc.array(fromSchema(schema.items ?? {}, hints, undefined, depth + 1), {
              minLength: schema.minItems ?? 0,
              maxLength: Math.max(maxItems, schema.minItems ?? 0),
            }),
          },
          {
            weight: 1,
            arbitrary: fc.array(fromSchema(schema.items ?? {}, hints, undefined, depth + 1), {
              minLength: maxItems + 1,
              maxLength: maxItems + 3,
            }),
          },
        );
      }
      case 'object':
        return objectArb(schema, hints, depth);
      default:
        return stringArb(schema, name, hints);
    }
  });
  return arbs.length === 1 ? arbs[0] : fc.oneof(...arbs);
}

function objectArb(schema: any, hints: FieldHints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, any> = schema.properties ?? {};
  let required: string[] = schema.required ?? [];
  if (Array.isArray(schema.oneOf)) {
    const branches: string[][] = schema.oneOf.map((b: any) => b.required ?? []);
    return fc
      .constantFrom(...branches)
      .chain((req) => objectArb({ ...schema, oneOf: undefined, required: [...required, ...req] }, hints, depth));
  }
  const entries = Object.entries(props).map(([k, s]) => {
    const isReq = required.includes(k);
    const v = fromSchema(s, hints, k, depth + 1);
    return [k, isReq ? v : fc.option(v, { nil: undefined, freq: 2 })] as const;
  });
  required = [...required];
  return fc.record(Object.fromEntries(entries) as Record<string, fc.Arbitrary<unknown>>).map((o) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
    return out;
  });
}

/** Breaks a valid-ish object: a field gets a wrong value, a key is dropped or a hostile key added. */
export function mutateObject(base: fc.Arbitrary<unknown>, schema: any): fc.Arbitrary<unknown> {
  const keys = Object.keys(schema?.properties ?? {});
  return fc
    .tuple(
      base,
      fc.constantFrom('wrong', 'drop', 'extra', 'pollute', 'huge') as fc.Arbitrary<string>,
      fc.nat(),
      wrongValue,
      hostileString,
    )
    .map(([b, how, i, wrong, str]) => {
      const o: Record<string, unknown> = b && typeof b === 'object' && !Array.isArray(b) ? { ...(b as object) } : {};
      const key = keys.length ? keys[i % keys.length] : 'x';
      if (how === 'wrong') o[key] = wrong;
      else if (how === 'drop') delete o[key];
      else if (how === 'extra') o[str.slice(0, 50) || 'extra'] = wrong;
      else if (how === 'huge') o[key] = str.length > 1000 ? str : str + 'x'.repeat(20_000);
      else
        return {
          ...o,
          ...(JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}') as object),
        };
      return o;
    });
}

/** Raw bodies that are not a JSON object at all (and some that are not JSON). */
export const rawHostileBody: fc.Arbitrary<{ body: string; contentType: string; contentEncoding?: string }> = fc.oneof(
  fc
    .constantFrom(
      '',
      'not json',
      '{"a":',
      '{"a":1,}',
      "{'a':1}",
      '[]',
      'null',
      '"str"',
      '123',
      'true',
      '\u0000',
      '{"a":"\\ud800"}',
      '{"a":1e999}',
      '{"a":01}',
    )
    .map((body) => ({ body, contentType: 'application/json' })),
  fc
    .integer({ min: 1000, max: 30_000 })
    .map((n) => ({ body: '['.repeat(n) + ']'.repeat(n), contentType: 'application/json' })),
  fc
    .integer({ min: 1000, max: 30_000 })
    .map((n) => ({ body: '{"a":'.repeat(n) + '1' + '}'.repeat(n), contentType: 'application/json' })),
  fc.constant({ body: JSON.stringify({ big: 'x'.repeat(70 * 1024) }), contentType: 'application/json' }),
  fc
    .constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-7',
      'application/xml',
    )
    .map((ct) => ({ body: 'a=1&b=2', contentType: ct })),
  fc.constant({ body: '{"a":1}', contentType: 'application/json; charset=bogus' }),
  // Declared compressed, sent plain: the decoder fails (a client error, not a server fault).
  fc
    .constantFrom('gzip', 'deflate', 'br', 'x-gzip', 'compress')
    .map((contentEncoding) => ({ body: '{"a":1}', contentType: 'application/json', contentEncoding })),
);

/**
 * Cursors shaped like the service's own (base64url of a keyset array, or `<µs>.<id>`) carrying
 * values no column holds: the decoder, not the query, must refuse them.
 */
const forgedCursor: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('h', 'n', 't', 'x'),
    fc.constantFrom<unknown>(
      2147483648,
      -2147483649,
      1e20,
      Number.MAX_SAFE_INTEGER,
      -0,
      1.5,
      0,
      '+275760-09-13T00:00:00.000Z',
      '-000001-01-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      'now',
      null,
    ),
    fc.constantFrom<unknown>('2026-11-24T10:00:00.000Z', '+275760-09-13T00:00:00.000Z', 99999999999999),
    fc.constantFrom('00000000-0000-4000-8000-000000000001', '-'.repeat(36), 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'),
    fc.boolean(),
  )
  .map(([tag, a, b, id, notif]) =>
    Buffer.from(
      notif
        ? `${String(a).replace(/\D/g, '').slice(0, 17) || '1'}.${id}`
        : JSON.stringify(tag === 't' ? [tag, a, b, id] : [tag, a, id]),
    ).toString('base64url'),
  );

/** A query string (already encoded) from a query schema: valid-ish, boundary and hostile. */
export function queryArb(schema: any, hints: FieldHints): fc.Arbitrary<string> {
  const valid = schema
    ? (fromSchema(schema, hints) as fc.Arbitrary<Record<string, unknown>>)
    : fc.constant({} as Record<string, unknown>);
  const encQ = (o: Record<string, unknown>) =>
    Object.entries(o)
      .map(([k, v]) => `${enc(k)}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`)
      .join('&');
  const keys = Object.keys(schema?.properties ?? {});
  const key = keys.length ? fc.constantFrom(...keys) : fc.constant('q');
  return fc.oneof(
    { weight: 3, arbitrary: valid.map(encQ) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, key, hostileString).map(([o, k, s]) => encQ({ ...o, [k]: s.slice(0, 3000) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(key, fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }))
        .map(([k, a, b]) => `${k}=${enc(a)}&${k}=${enc(b)}&${k}[]=1`),
    },
    ...(keys.includes('cursor')
      ? [{ weight: 2, arbitrary: fc.tuple(valid, forgedCursor).map(([o, c]) => encQ({ ...o, cursor: c })) }]
      : []),
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '__proto__[polluted]=1',
        'constructor[prototype][polluted]=1',
        '__proto__=x',
        'a[b][c][d][e]=1',
        '%E0%A4%A',
        '%',
        '%%',
        'q=%ED%A0%80',
        'limit=1e3',
        'limit=-0',
        'limit=0x10',
        'cursor=%00',
        '&&&==&',
        'q',
      ),
    },
  );
}

/** Path parameter values: real, random ids, and hostile segments (encoded or deliberately not). */
export function paramArb(real: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(enc(real)) },
    { weight: 1, arbitrary: fc.uuid().map(enc) },
    { weight: 1, arbitrary: fc.constantFrom(enc(real.toUpperCase()), '@' + enc(real), enc(real) + '%00', '%ED%A0%80') },
    { weight: 2, arbitrary: hostileString.map((s) => enc(s.slice(0, 1500)) || 'x') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%',
        '%E0%A4%A',
        '%C0%AF',
        '..',
        '%2e%2e',
        '%2F',
        'null',
        'undefined',
        '0',
        '-1',
        '1.5',
        'true',
        '%7B%7D',
        'a'.repeat(1500),
      ),
    },
  );
}
