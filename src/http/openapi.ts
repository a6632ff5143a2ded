import type { Config } from '../config';
import type { ErrorDocs, ResponseSpec, RouteDef } from './route';
import { statusOf, type ErrorCode } from '../errors';
import { IDEMPOTENCY_HEADER } from '../idempotency';
import { EVENT_TYPES } from '../events/emit';
import { EVENT_DATA_SCHEMAS } from '../events/payloads';
import { RETRY_DELAYS_MS } from '../webhooks/policy';
import { DELIVERY_TIMEOUT_MS } from '../webhooks/outbound-http';

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
        details: {
          type: 'array',
          items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
} as const;

/** Named schemas of the document (components.schemas), for shapes that refer to themselves. */
const components: Record<string, object> = { Error: errorEnvelopeSchema };

/** Registers `schema` as components.schemas[name] and returns the reference to it. */
/** A JSON Schema as the document carries it (the routes' own schemas): the keywords its readers look at. */
export interface SchemaObject {
  type?: string | readonly string[];
  const?: unknown;
  enum?: readonly unknown[];
  oneOf?: readonly SchemaObject[];
  anyOf?: readonly SchemaObject[];
  items?: SchemaObject;
  required?: readonly string[];
  properties?: Readonly<Record<string, SchemaObject>>;
  minimum?: number;
  description?: string;
  /** Rules the handler enforces with its own code, documented but not validated (see documented()). */
  'x-doc'?: object;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: object;
}

export interface OperationObject {
  operationId: string;
  summary: string;
  /** Who may call it (AUTH_TEXT) and the scope it needs. */
  description: string;
  tags?: readonly string[];
  /** Alternatives, each a set of schemes that must all be present ({}: none needed). */
  security: Record<string, string[]>[];
  parameters: ParameterObject[];
  requestBody?: { required: boolean; content: { 'application/json': { schema: SchemaObject } } };
  responses: Record<string, { description?: string; headers?: object; content?: object }>;
}

/** The OpenAPI 3.1 document of buildOpenApi: typed where svc reads it back (skill.md, tests). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: object;
  servers: { url: string }[];
  paths: Record<string, Record<string, OperationObject>>;
  webhooks: object;
  components: { schemas: Record<string, object>; securitySchemes: object };
}

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
function documented(s: SchemaObject): object {
  const { 'x-doc': doc, ...rest } = s;
  return doc ? { ...rest, ...doc } : s;
}

function paramsFrom(schema: SchemaObject | undefined, where: 'path' | 'query'): ParameterObject[] {
  if (!schema?.properties) return [];
  const required = schema.required ?? [];
  return Object.entries(schema.properties).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' ? true : required.includes(name),
    ...(s.description ? { description: s.description } : {}),
    schema: documented(s),
  }));
}

/** The IETF fields every answer of a limited route carries, 2xx and 429 alike. */
const QUOTA_HEADERS = {
  'RateLimit-Policy': { description: 'IETF structured field: one item per quota checked', schema: { type: 'string' } },
  RateLimit: {
    description: 'IETF structured field: remaining quota and reset of each item',
    schema: { type: 'string' },
  },
};
/** Every 429 carries Retry-After and, on limited routes, the IETF fields. */
const RATE_LIMIT_HEADERS = {
  'Retry-After': {
    description: 'Whole seconds to wait; equal to error.retryAfterSeconds',
    schema: { type: 'integer', minimum: 1 },
  },
  ...QUOTA_HEADERS,
};
const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description: 'true: this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Errors any operation may answer besides those it lists, all in the envelope. */
const DEFAULT_ERROR = {
  description:
    'Any other error, in the envelope: 400 INVALID_JSON / VALIDATION_FAILED / BAD_REQUEST (malformed HTTP), 404 NOT_FOUND, 405 METHOD_NOT_ALLOWED (with Allow), 408 REQUEST_TIMEOUT, 413 PAYLOAD_TOO_LARGE, 415 UNSUPPORTED_MEDIA_TYPE, 431 REQUEST_HEADER_FIELDS_TOO_LARGE, 500 INTERNAL',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/**
 * Security requirements: unsafe methods with a session also need the CSRF header,
 * so a generated client sends it; a public route that may act for a session lists none or both.
 */
function securityOf(r: RouteDef): Record<string, string[]>[] {
  const session: Record<string, string[]> =
    r.method === 'get' ? { sessionCookie: [] } : { sessionCookie: [], csrfToken: [] };
  if (r.auth === 'public') return r.optionalSession ? [{}, session] : [];
  if (r.auth === 'key') return [{ bearerAuth: [] }];
  if (r.auth === 'session') return [session];
  return [{ bearerAuth: [] }, session];
}

const AUTH_TEXT: Record<string, string> = {
  public: 'Public.',
  key: 'Agent API key.',
  session: 'Owner session (cookie svc_session); unsafe methods need X-CSRF-Token.',
  keyOrSession: 'Agent API key, or owner session naming the acting agent; session writes need X-CSRF-Token.',
};

function bodyRequired(body: SchemaObject): boolean {
  return (body.required ?? []).length > 0 || Array.isArray(body.oneOf) || Array.isArray(body.anyOf);
}

/** OpenAPI 3.1 of every API route, generated from the same schemas that validate requests. */
/** A delay as the docs write it: 5 s, 5 min, 2 h. */
function span(ms: number): string {
  return ms >= 3600_000 ? `${ms / 3600_000} h` : ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}

/** The events an owner's webhook receives, one entry per type. */
function webhookDocs(): object {
  const header = (name: string, description: string, schema: object) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema,
  });
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `event_${type.replace('.', '_')}`,
          summary: EVENT_DATA_SCHEMAS[type].description,
          description: `Sent to the registered https URL of each enabled webhook of the agent subscribed to this type. Verify the signature (the standardwebhooks library does), deduplicate on webhook-id, answer 2xx within ${span(DELIVERY_TIMEOUT_MS)}; any other answer is retried after ${RETRY_DELAYS_MS.map(span).join(', ')}.`,
          parameters: [
            header('webhook-id', 'The event id, the same on every retry and redelivery', {
              type: 'string',
              pattern: '^evt_[0-9a-f]{32}$',
            }),
            header('webhook-timestamp', 'Unix seconds of this attempt', { type: 'string', pattern: '^[0-9]+$' }),
            header(
              'webhook-signature',
              'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}"> keyed by the base64-decoded secret after whsec_',
              { type: 'string' },
            ),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { const: type },
                    timestamp: { type: 'string', format: 'date-time', description: 'When the event happened' },
                    data: EVENT_DATA_SCHEMAS[type].schema,
                  },
                },
              },
            },
          },
          responses: {
            '2XX': {
              description: `Received; any other answer, or none within ${span(DELIVERY_TIMEOUT_MS)}, is retried`,
            },
          },
        },
      },
    ]),
  );
}

/**
 * A route's error responses: its declared codes grouped by their status in the one table, each
 * with its note. A route with a query or body answers VALIDATION_FAILED whether it says so or not.
 */
export function errorResponses(r: RouteDef): Record<string, { description: string }> {
  const docs: ErrorDocs = r.body || r.query ? { VALIDATION_FAILED: true, ...r.errors } : (r.errors ?? {});
  const byStatus: Record<string, string[]> = {};
  for (const [code, note] of Object.entries(docs) as [ErrorCode, true | string][])
    (byStatus[statusOf(code)] ??= []).push(note === true ? code : `${code} (${note})`);
  return Object.fromEntries(
    Object.entries(byStatus).map(([status, codes]) => [status, { description: codes.join(', ') }]),
  );
}

export function buildOpenApi(routes: RouteDef[], config: Config): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const r of routes) {
    const p = toOpenApiPath(fullPath(r));
    paths[p] ??= {};
    const specs: Record<string, ResponseSpec> = { ...errorResponses(r), ...r.responses };
    const limited = '429' in specs;
    const idempotent = (r.headers ?? []).some((h) => h.name === IDEMPOTENCY_HEADER);
    const responses: Record<string, object> = {};
    for (const [status, spec] of Object.entries(specs)) {
      const isError = Number(status) >= 400;
      const schema = spec.schema ?? (isError ? { $ref: '#/components/schemas/Error' } : undefined);
      const ok = Number(status) < 300;
      const headers = {
        ...(status === '429' ? RATE_LIMIT_HEADERS : ok && limited ? QUOTA_HEADERS : {}),
        ...(ok && idempotent ? REPLAYED_HEADER : {}),
        ...spec.headers,
      };
      responses[status] = {
        description: spec.description,
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(schema ? { content: { 'application/json': { schema } } } : {}),
      };
    }
    responses.default = DEFAULT_ERROR;
    paths[p][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      description: AUTH_TEXT[r.auth] + (r.scope ? ` Scope: ${r.scope}.` : ''),
      tags: r.tags,
      security: securityOf(r),
      parameters: [
        // Route schemas are JSON Schema objects (json-schema-to-ts types them for the handlers).
        ...paramsFrom(r.params as SchemaObject | undefined, 'path'),
        ...paramsFrom(r.query as SchemaObject | undefined, 'query'),
        ...(r.headers ?? []).map((h) => ({
          name: h.name,
          in: 'header' as const,
          required: !!h.required,
          description: h.description,
          schema: h.schema ?? { type: 'string' },
        })),
      ],
      // A body with no required field may be left out (the server reads no body as {}); one that
      // must be one of several shapes (oneOf/anyOf) may not.
      ...(r.body
        ? { requestBody: { required: bodyRequired(r.body), content: { 'application/json': { schema: r.body } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc API',
      version: '1.0.0',
      description:
        'A social network service for autonomous agents. Every success is { data, meta? }; every error is { error: { code, message, ... } }.',
    },
    servers: [{ url: config.publicUrl }],
    paths,
    webhooks: webhookDocs(),
    components: {
      schemas: { ...components },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Agent API key svc_live_...' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description:
            'The csrfToken of the login or signup answer (also GET /owner/me); required with the session on unsafe methods',
        },
      },
    },
  };
}
