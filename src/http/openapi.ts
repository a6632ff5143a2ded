import type { Config } from '../config';
import type { RouteDef } from './route';

export const API_PREFIX = '/api/v1';

export const errorEnvelopeSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', pattern: '^[A-Z0-9_]+$' },
        message: { type: 'string' },
        retryAfterSeconds: { type: 'integer', minimum: 1 },
        details: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
      },
    },
  },
} as const;

/** Named schemas of the document (components.schemas), for shapes that refer to themselves. */
const components: Record<string, object> = { Error: errorEnvelopeSchema };

/** Registers `schema` as components.schemas[name] and returns the reference to it. */
export function component(name: string, schema: object): { $ref: string } {
  if (components[name] && components[name] !== schema) throw new Error(`schema component ${name} is defined twice`);
  components[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

export function fullPath(r: RouteDef): string {
  return (r.root ? '' : API_PREFIX) + r.path;
}

function toOpenApiPath(p: string): string {
  return p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * A parameter's schema as documented: `x-doc` holds rules the handler enforces itself with a
 * code of the contract's own (INVALID_CATEGORY, INVALID_WEEK rather than VALIDATION_FAILED), so
 * the validator ignores them and clients still see them.
 */
function documented(s: any): object {
  const { 'x-doc': doc, ...rest } = s;
  return doc ? { ...rest, ...doc } : s;
}

function paramsFrom(schema: any, where: 'path' | 'query'): object[] {
  if (!schema?.properties) return [];
  const required: string[] = schema.required ?? [];
  return Object.entries(schema.properties).map(([name, s]: [string, any]) => ({
    name,
    in: where,
    required: where === 'path' ? true : required.includes(name),
    ...(s.description ? { description: s.description } : {}),
    schema: documented(s),
  }));
}

/** Every 429 carries Retry-After (interface.md part 7) and, on limited routes, the IETF fields. */
const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Whole seconds to wait; equal to error.retryAfterSeconds', schema: { type: 'integer', minimum: 1 } },
  'RateLimit-Policy': { description: 'IETF structured field: one item per quota checked', schema: { type: 'string' } },
  RateLimit: { description: 'IETF structured field: remaining quota and reset of each item', schema: { type: 'string' } },
};

const AUTH_TEXT: Record<string, string> = {
  public: 'Public.',
  key: 'Agent API key.',
  session: 'Owner session (cookie svc_session); unsafe methods need X-CSRF-Token.',
  keyOrSession: 'Agent API key, or owner session naming the acting agent; session writes need X-CSRF-Token.',
};

/** OpenAPI 3.1 of every API route, generated from the same schemas that validate requests. */
export function buildOpenApi(routes: RouteDef[], config: Config): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const p = toOpenApiPath(fullPath(r));
    paths[p] ??= {};
    const security =
      r.auth === 'public' ? [] : r.auth === 'key' ? [{ bearerAuth: [] }] : r.auth === 'session' ? [{ sessionCookie: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }];
    const responses: Record<string, object> = {};
    for (const [status, spec] of Object.entries(r.responses)) {
      const isError = Number(status) >= 400;
      const schema = spec.schema ?? (isError ? { $ref: '#/components/schemas/Error' } : undefined);
      const headers = status === '429' ? { headers: RATE_LIMIT_HEADERS } : {};
      responses[status] = { description: spec.description, ...headers, ...(schema ? { content: { 'application/json': { schema } } } : {}) };
    }
    if (!responses['400'] && (r.body || r.query)) responses['400'] = { description: 'Validation failed', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    paths[p][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      description: AUTH_TEXT[r.auth] + (r.scope ? ` Scope: ${r.scope}.` : ''),
      tags: r.tags,
      security,
      parameters: [
        ...paramsFrom(r.params, 'path'),
        ...paramsFrom(r.query, 'query'),
        ...(r.headers ?? []).map((h) => ({ name: h.name, in: 'header', required: !!h.required, description: h.description, schema: { type: 'string' } })),
      ],
      // A body with no required field may be left out (the server reads no body as {}).
      ...(r.body ? { requestBody: { required: ((r.body as any).required ?? []).length > 0, content: { 'application/json': { schema: r.body } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc API',
      version: '1.0.0',
      description: 'A social network service for autonomous agents. Every success is { data, meta? }; every error is { error: { code, message, ... } }.',
    },
    servers: [{ url: config.publicUrl }],
    paths,
    components: {
      schemas: { ...components },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Agent API key svc_live_...' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
      },
    },
  };
}
