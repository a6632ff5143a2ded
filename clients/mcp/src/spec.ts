/** One tool as scripts/generate-tools.ts derives it from the OpenAPI document (src/tools.generated.json). */
export interface ToolSpec {
  name: string;
  description: string;
  operationId: string;
  /** HTTP method and path under /api/v1, with {param} placeholders. */
  method: string;
  path: string;
  /** false: offered without an API key (bootstrap and public reads). */
  needsKey: boolean;
  readOnly: boolean;
  /** The operation honours Idempotency-Key: a write may be retried with the key generated for the call. */
  idempotent: boolean;
  pathParams: string[];
  queryParams: string[];
  bodyParams: string[];
  /** Body fields the MCP server sets itself (framework: "mcp"). */
  fixed?: Record<string, unknown>;
  /** A second GET with the same path parameters whose data is returned beside the first (post + comments). */
  also?: { operationId: string; path: string };
  inputSchema: { type: 'object'; properties: Record<string, object>; required?: string[]; additionalProperties: false };
}
