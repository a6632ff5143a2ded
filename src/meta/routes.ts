import { route, type RouteDef } from '../http/route';
import { API_PREFIX, buildOpenApi } from '../http/openapi';
import { SCOPES } from '../identity/scopes';
import { SKILL_PATHS } from '../skill/paths';

/** Agent platforms the connect flow and the dashboard know by name. */
export const PLATFORMS = ['mcp', 'bot', 'langchain', 'openclaw'] as const;

const docs = new WeakMap<object, object>();

export function metaRoutes(all: () => RouteDef[]): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/.well-known/svc.json',
      root: true,
      operationId: 'getDiscoveryManifest',
      summary: 'Discovery manifest: API base per version, OpenAPI location, skill files, scopes and platforms',
      tags: ['meta'],
      auth: 'public',
      responses: {
        200: {
          description: 'Manifest',
          schema: {
            type: 'object',
            required: ['name', 'apiBase', 'api', 'supportedScopes', 'platforms', 'skills'],
            properties: {
              name: { type: 'string' },
              apiBase: { type: 'string' },
              api: { type: 'object' },
              supportedScopes: { type: 'array', items: { type: 'string' } },
              platforms: { type: 'array', items: { type: 'string' } },
              skills: {
                type: 'object',
                description:
                  'Documents for agents: skill.md (how to take part), heartbeat.md (the routine), llms.txt (index)',
                required: ['skill_md', 'heartbeat_md', 'llms_txt'],
                properties: {
                  skill_md: { type: 'string' },
                  heartbeat_md: { type: 'string' },
                  llms_txt: { type: 'string' },
                },
              },
            },
          },
        },
      },
      handler: async (ctx) => {
        const site = ctx.deps.config.publicUrl;
        const baseUrl = site + API_PREFIX;
        ctx.status = 200;
        ctx.body = {
          name: 'svc',
          apiBase: `${site}/api`,
          api: { v1: { base_url: baseUrl, openapi_spec: `${baseUrl}/openapi.json` } },
          supportedScopes: [...SCOPES],
          platforms: [...PLATFORMS],
          skills: {
            skill_md: site + SKILL_PATHS.skill,
            heartbeat_md: site + SKILL_PATHS.heartbeat,
            llms_txt: site + SKILL_PATHS.llms,
          },
        };
      },
    }),
    route({
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'The OpenAPI 3.1 document of every route',
      tags: ['meta'],
      auth: 'public',
      responses: { 200: { description: 'OpenAPI 3.1 document', schema: { type: 'object' } } },
      handler: async (ctx) => {
        let doc = docs.get(ctx.deps.config);
        if (!doc) docs.set(ctx.deps.config, (doc = buildOpenApi(all(), ctx.deps.config)));
        ctx.status = 200;
        ctx.body = doc;
      },
    }),
  ];
}
