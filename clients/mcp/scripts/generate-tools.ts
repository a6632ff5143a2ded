/**
 * Regenerates src/tools.generated.json: for every tool of src/catalog.ts, the HTTP call and a
 * JSON Schema input derived from the server's OpenAPI document (built in-process from the route
 * list, exactly as GET /api/v1/openapi.json serves it; no server, database or network needed).
 *
 *   npx tsx clients/mcp/scripts/generate-tools.ts [outFile]     (from the repository root)
 *   npm run generate                                            (from clients/mcp)
 *
 * test/clients/mcp-tools-current.test.ts fails while the committed file differs from a fresh one.
 */
import fs from 'fs';
import path from 'path';
import { openApiDocument } from '../../typescript/scripts/generate-types';
import { CATALOG, type CatalogEntry } from '../src/catalog';
import type { ToolSpec } from '../src/spec';
import { CONNECT_KEY_PREFIX } from '../../../src/identity/secrets';

export const TOOLS_FILE = path.resolve(__dirname, '../src/tools.generated.json');
export const REGENERATE_COMMAND =
  'npm run generate at the repository root, or npx tsx clients/typescript/scripts/generate-types.ts (each writes the TypeScript client types and these tools)';

const API_PREFIX = '/api/v1';
/**
 * Fields by which an owner session names the agent it acts for (voterAgentId, followerAgentId…):
 * the MCP server always acts as the agent of its key, so they are left out of the inputs.
 */
const ACTING_FIELD = /AgentId$/;

interface Operation {
  method: string;
  path: string;
  op: any;
}

function operations(doc: any): Map<string, Operation> {
  const byId = new Map<string, Operation>();
  for (const [p, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item))
      if (op && typeof op === 'object' && op.operationId) byId.set(op.operationId, { method, path: p, op });
  return byId;
}

function resolveRefs(schema: any, doc: any, seen: string[] = []): any {
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(s, doc, seen));
  if (!schema || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') {
    if (seen.includes(schema.$ref)) throw new Error(`recursive $ref ${schema.$ref} in a tool input`);
    const target = schema.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k], doc);
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
    return resolveRefs(target, doc, [...seen, schema.$ref]);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolveRefs(v, doc, seen)]));
}

function toolSpec(entry: CatalogEntry, byId: Map<string, Operation>, doc: any): ToolSpec {
  const found = byId.get(entry.operationId);
  if (!found) throw new Error(`tool ${entry.name}: no operation ${entry.operationId} in the OpenAPI document`);
  const { method, path: fullPath, op } = found;
  const security: object[] = op.security ?? [];
  const isPublic = security.length === 0 || security.some((s) => Object.keys(s).length === 0);
  const acting = (name: string) => ACTING_FIELD.test(name) && security.some((s: any) => 'sessionCookie' in s);
  if (!isPublic && !security.some((s: any) => 'bearerAuth' in s))
    throw new Error(`tool ${entry.name}: ${entry.operationId} takes no agent API key`);
  const properties: Record<string, any> = {};
  const required = new Set<string>();
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  const bodyParams: string[] = [];
  const add = (name: string, schema: any, isRequired: boolean, description?: string) => {
    if (name in properties) throw new Error(`tool ${entry.name}: input name ${name} used twice`);
    const s = resolveRefs(schema, doc);
    properties[name] = description && !s.description ? { ...s, description } : s;
    if (isRequired) required.add(name);
  };
  for (const p of op.parameters ?? []) {
    if (p.in === 'header') continue; // Idempotency-Key: the server generates one per call.
    if (p.in === 'query' && acting(p.name)) continue;
    if (p.in === 'path') pathParams.push(p.name);
    else if (p.in === 'query') queryParams.push(p.name);
    else throw new Error(`tool ${entry.name}: parameter in ${p.in} is not supported`);
    add(p.name, p.schema ?? {}, p.in === 'path' || p.required === true, p.description);
  }
  const notes: string[] = [];
  const body = op.requestBody?.content?.['application/json']?.schema;
  if (body) {
    const b = resolveRefs(body, doc);
    if (b.type !== 'object') throw new Error(`tool ${entry.name}: request body is not an object`);
    for (const [name, s] of Object.entries<any>(b.properties ?? {})) {
      if (acting(name) || (entry.fixed && name in entry.fixed)) continue;
      bodyParams.push(name);
      add(name, s, (b.required ?? []).includes(name));
    }
    // Models' tool-schema validators refuse top-level oneOf/anyOf: the rule goes in the description
    // instead, and the service still enforces it (400 VALIDATION_FAILED).
    if ((b.oneOf || b.anyOf) && b.description) notes.push(b.description);
  }
  for (const name of entry.require ?? []) {
    if (!(name in properties)) throw new Error(`tool ${entry.name}: cannot require unknown input ${name}`);
    required.add(name);
  }
  for (const [name, description] of Object.entries(entry.describe ?? {})) {
    if (!(name in properties)) throw new Error(`tool ${entry.name}: cannot describe unknown input ${name}`);
    properties[name] = { ...properties[name], description };
  }
  let also: ToolSpec['also'];
  if (entry.alsoOperationId) {
    const other = byId.get(entry.alsoOperationId);
    if (!other) throw new Error(`tool ${entry.name}: no operation ${entry.alsoOperationId}`);
    const otherPathParams = (other.op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
    if (other.method !== 'get' || otherPathParams.some((n: string) => !pathParams.includes(n)))
      throw new Error(`tool ${entry.name}: ${entry.alsoOperationId} must be a GET with the same path parameters`);
    also = { operationId: entry.alsoOperationId, path: other.path.slice(API_PREFIX.length) };
  }
  const idempotent = (op.parameters ?? []).some((p: any) => p.in === 'header' && /^idempotency-key$/i.test(p.name));
  return {
    name: entry.name,
    description: [entry.description, ...notes].join(' ').replaceAll('{CONNECT_KEY_PREFIX}', CONNECT_KEY_PREFIX),
    operationId: entry.operationId,
    method: method.toUpperCase(),
    path: fullPath.startsWith(API_PREFIX) ? fullPath.slice(API_PREFIX.length) : fullPath,
    needsKey: !isPublic && !entry.bootstrap,
    readOnly: method === 'get',
    idempotent,
    pathParams,
    queryParams,
    bodyParams,
    ...(entry.fixed ? { fixed: entry.fixed } : {}),
    ...(also ? { also } : {}),
    inputSchema: {
      type: 'object',
      properties,
      ...(required.size ? { required: [...required] } : {}),
      additionalProperties: false,
    },
  };
}

/** Every tool of the catalog with its input schema, in catalog order. */
export function generateTools(): ToolSpec[] {
  const doc: any = openApiDocument();
  const byId = operations(doc);
  const names = new Set<string>();
  return CATALOG.map((entry) => {
    if (names.has(entry.name)) throw new Error(`tool name ${entry.name} used twice`);
    names.add(entry.name);
    return toolSpec(entry, byId, doc);
  });
}

export function generatedText(): string {
  return JSON.stringify(generateTools(), null, 2) + '\n';
}

if (require.main === module) {
  const out = path.resolve(process.argv[2] ?? TOOLS_FILE);
  fs.writeFileSync(out, generatedText());
  process.stdout.write(`wrote ${path.relative(process.cwd(), out)}\n`);
}
