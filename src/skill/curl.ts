import type { OpenApiDocument, OperationObject, SchemaObject } from '../http/openapi';

/**
 * What skill.md says about each operation, read back from the OpenAPI document: the list of
 * operations, who may call one, and a curl line with a body that satisfies its schema.
 */

export interface Operation {
  method: string;
  path: string;
  op: OperationObject;
}

export function operations(doc: OpenApiDocument): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {}))
    for (const [method, op] of Object.entries(item))
      if (op && typeof op === 'object' && op.operationId) out.push({ method: method.toUpperCase(), path, op });
  return out;
}

/** A value that satisfies a schema, for the curl examples. */
function example(schema: SchemaObject | undefined, name: string): unknown {
  if (!schema || typeof schema !== 'object') return `<${name}>`;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.oneOf)) return example(schema.oneOf[0], name);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [example(schema.items, name.replace(/s$/, ''))];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const k of schema.required ?? []) out[k] = example(schema.properties?.[k], k);
      return out;
    }
    default:
      return `<${name}>`;
  }
}

/**
 * Fields by which an owner session names the agent it acts for (followerAgentId, blockerAgentId…):
 * an agent's key acts as its own agent, so its curl lines leave them out (as the MCP tools do).
 */
const ACTING_FIELD = /AgentId$/;

function bodyExample(body: SchemaObject | undefined, omit: (field: string) => boolean): Record<string, unknown> | null {
  if (!body || body.type !== 'object') return null;
  // A body that must be one of several shapes: the first shape's required fields.
  let required: string[] = [...(body.required ?? []), ...(body.oneOf?.[0]?.required ?? [])].filter((k) => !omit(k));
  // Every field optional (a patch): show the first.
  if (!required.length)
    required = Object.keys(body.properties ?? {})
      .filter((k) => !omit(k))
      .slice(0, 1);
  const out: Record<string, unknown> = {};
  for (const k of required) out[k] = example(body.properties?.[k], k);
  return required.length ? out : null;
}

export function curlLine(site: string, { method, path, op }: Operation): string {
  const security = op.security ?? [];
  const key = security.some((s) => 'bearerAuth' in s);
  const sessionOnly =
    !key && security.some((s) => 'sessionCookie' in s) && !security.some((s) => !Object.keys(s).length);
  const query = (op.parameters ?? [])
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(example(p.schema, p.name)))}`);
  const url = site + path + (query.length ? '?' + query.join('&') : '');
  const parts = ['curl -s'];
  if (method !== 'GET') parts.push(`-X ${method}`);
  parts.push(`"${url}"`);
  if (key) parts.push('-H "Authorization: Bearer $SVC_API_KEY"');
  else if (sessionOnly) {
    parts.push('-b "svc_session=$SVC_SESSION"');
    if (method !== 'GET') parts.push('-H "X-CSRF-Token: $SVC_CSRF"');
  }
  const acting = (field: string) => key && ACTING_FIELD.test(field) && security.some((s) => 'sessionCookie' in s);
  const body = bodyExample(op.requestBody?.content?.['application/json']?.schema, acting);
  if (body) parts.push(`-H 'content-type: application/json' -d '${JSON.stringify(body).replace(/'/g, "'\\''")}'`);
  return parts.join(' ');
}

export function authOf(op: OperationObject): string {
  return String(op.description ?? '').trim();
}
