#!/usr/bin/env node
/**
 * svc-mcp: the svc MCP server.
 *
 *   SVC_BASE_URL=http://localhost:3000 SVC_API_KEY=svc_live_… svc-mcp            (stdio)
 *   svc-mcp --http [--port 3333] [--host 127.0.0.1]                               (Streamable HTTP at /mcp)
 *
 * Without SVC_API_KEY only connect_exchange and the read tools are offered. Over HTTP a client may
 * instead send its own key as `Authorization: Bearer svc_live_…` when it opens a session, and then
 * with every request of that session.
 */
import http from 'http';
import { createHash, randomUUID, timingSafeEqual } from 'crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createSvcMcpServer } from './server';

interface Flags {
  http: boolean;
  port: number;
  host: string;
}

const USAGE = `usage: svc-mcp [--http [--port N] [--host H]]
  env SVC_BASE_URL (default http://localhost:3000), SVC_API_KEY (optional)`;

export function parseFlags(argv: string[]): Flags {
  const flags: Flags = { http: false, port: 3333, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--http') flags.http = true;
    else if (a === '--port') flags.port = Number(argv[++i]);
    else if (a === '--host') flags.host = String(argv[++i]);
    else if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else {
      process.stderr.write(`unknown argument ${a}\n${USAGE}\n`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65535) {
    process.stderr.write(`--port must be 0-65535\n`);
    process.exit(2);
  }
  return flags;
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 4 * 1024 * 1024) reject(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(raw ? JSON.parse(raw) : undefined);
      } catch {
        reject(new Error('invalid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function jsonRpcError(
  res: http.ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The request's `Authorization: Bearer …` token, if any. */
function bearerOf(req: http.IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
}

const keyHash = (key: string): Buffer => createHash('sha256').update(key).digest();

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/**
 * On a loopback address, a request must name a loopback host and come from no other origin: a web
 * page the user visits cannot reach the server through DNS rebinding or a cross-site request.
 */
function refusedOrigin(req: http.IncomingMessage, flags: Flags): string | null {
  if (!LOOPBACK.has(flags.host)) return null;
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!LOOPBACK.has(host)) return `Host ${req.headers.host ?? '(none)'} is not this loopback server`;
  const origin = req.headers.origin;
  if (origin && !(URL.canParse(origin) && LOOPBACK.has(new URL(origin).hostname)))
    return `Origin ${origin} may not use this server`;
  return null;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  /** SHA-256 of the Bearer key sent at initialize: every later request must send the same key. */
  keyHash: Buffer | null;
}

/**
 * Streamable HTTP at /mcp: one MCP session (and one agent key) per Mcp-Session-Id. The session id
 * is no credential: a session opened with a Bearer key answers only requests carrying that key
 * (401 without one, 403 with another). An unknown or ended session id is 404, which tells a client
 * to initialize a new session (MCP Streamable HTTP, session management).
 */
export function startHttp(baseUrl: string, envKey: string | undefined, flags: Flags): http.Server {
  const sessions = new Map<string, Session>();
  const server = http.createServer(async (req, res) => {
    try {
      const refused = refusedOrigin(req, flags);
      if (refused) return jsonRpcError(res, 403, refused);
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') return jsonRpcError(res, 404, 'Not found: use /mcp');
      const sessionId = req.headers['mcp-session-id'];
      const bearer = bearerOf(req);
      if (sessionId !== undefined) {
        const session = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
        if (!session)
          return jsonRpcError(
            res,
            404,
            'Session not found: start a new session with an initialize request',
            {},
            -32001,
          );
        if (session.keyHash) {
          if (!bearer)
            return jsonRpcError(res, 401, 'This session was opened with an API key: send it as Authorization: Bearer', {
              'www-authenticate': 'Bearer',
            });
          if (!timingSafeEqual(keyHash(bearer), session.keyHash))
            return jsonRpcError(res, 403, 'This session was opened with another API key');
        }
        const body = req.method === 'POST' ? await readBody(req) : undefined;
        return await session.transport.handleRequest(req, res, body);
      }
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      if (req.method !== 'POST' || !isInitializeRequest(body))
        return jsonRpcError(res, 400, 'No valid session: send an initialize request first');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, { transport, keyHash: bearer ? keyHash(bearer) : null }),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await createSvcMcpServer({ baseUrl, apiKey: bearer ?? envKey }).connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) jsonRpcError(res, 400, String((e as Error).message ?? e));
    }
  });
  server.listen(flags.port, flags.host, () => {
    const a = server.address();
    const port = typeof a === 'object' && a ? a.port : flags.port;
    process.stderr.write(`svc-mcp: Streamable HTTP on http://${flags.host}:${port}/mcp → ${baseUrl}\n`);
  });
  return server;
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const baseUrl = process.env.SVC_BASE_URL || 'http://localhost:3000';
  const apiKey = process.env.SVC_API_KEY || undefined;
  if (flags.http) {
    startHttp(baseUrl, apiKey, flags);
    return;
  }
  // stdout carries the protocol: diagnostics go to stderr only, and never the key.
  await createSvcMcpServer({ baseUrl, apiKey }).connect(new StdioServerTransport());
}

/** Runs the command line (bin/svc-mcp.js, or `node dist/index.js`). */
export function run(): void {
  main().catch((e) => {
    process.stderr.write(`svc-mcp: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}

if (require.main === module) run();
