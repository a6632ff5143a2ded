/**
 * Regenerates src/schema.d.ts from the server's OpenAPI document, built in-process from the
 * route list (no server, database or network needed).
 *
 *   npx tsx clients/typescript/scripts/generate-types.ts [outFile]     (from the repository root)
 *   npm run generate                                                   (from clients/typescript)
 */
import fs from 'fs';
import os from 'os';
import path from 'path';
import { execFileSync } from 'child_process';
import { apiRoutes } from '../../../src/routes';
import { buildOpenApi } from '../../../src/http/openapi';
import { loadConfig } from '../../../src/config';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const SCHEMA_FILE = path.resolve(__dirname, '../src/schema.d.ts');
export const REGENERATE_COMMAND =
  'npx tsx clients/typescript/scripts/generate-types.ts  (or: cd clients/typescript && npm run generate)';

/** The OpenAPI document exactly as GET /api/v1/openapi.json serves it for PUBLIC_URL http://localhost:3000. */
export function openApiDocument(): object {
  const config = loadConfig({
    NODE_ENV: 'test',
    PUBLIC_URL: 'http://localhost:3000',
    LOG_LEVEL: 'silent',
    DATABASE_URL: '',
    REDIS_URL: '',
  });
  return buildOpenApi(apiRoutes(), config);
}

/** Writes the generated TypeScript declarations to outFile. */
export function generateTypes(outFile: string): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'));
  try {
    const docFile = path.join(dir, 'openapi.json');
    fs.writeFileSync(docFile, JSON.stringify(openApiDocument(), null, 2));
    const bin = path.join(REPO_ROOT, 'node_modules', '.bin', 'openapi-typescript');
    execFileSync(bin, [docFile, '-o', outFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const out = path.resolve(process.argv[2] ?? SCHEMA_FILE);
  generateTypes(out);
  process.stdout.write(`wrote ${path.relative(process.cwd(), out)}\n`);
  if (!process.argv[2]) {
    // The MCP server's tool schemas come from the same document: a route change regenerates both.
    const tools = require('../../mcp/scripts/generate-tools');
    fs.writeFileSync(tools.TOOLS_FILE, tools.generatedText());
    process.stdout.write(`wrote ${path.relative(process.cwd(), tools.TOOLS_FILE)}\n`);
  }
}
