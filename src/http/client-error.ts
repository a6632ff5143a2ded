import http from 'http';
import type { Duplex } from 'stream';
import type { Logger } from '../log';
import { statusOf, type ErrorCode } from '../errors';

/**
 * Requests Node's HTTP parser refuses before or while Koa sees them (bad framing, a Content-Length
 * that does not match the body, control characters in a header, headers over 16 KiB, a client too
 * slow to send its request): Node would answer a bare status line with no body. The API promises
 * the envelope on every error, so they get it here, then the connection closes as Node does.
 */
const ANSWERS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['REQUEST_HEADER_FIELDS_TOO_LARGE', 'Request headers are too large'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['PAYLOAD_TOO_LARGE', 'Chunk extensions are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'The request was not received in time'],
};
const MALFORMED: [ErrorCode, string] = ['BAD_REQUEST', 'Malformed HTTP request'];

const ANSWERED = Symbol('svc.clientErrorStatus');

/** The status the parser's error was answered with on this socket, for the access log. */
export function clientErrorStatus(socket: unknown): number | undefined {
  return (socket as { [ANSWERED]?: number } | null)?.[ANSWERED];
}

/** Errors of the client's own connection: logged at debug, never with the request's bytes. */
export function isClientConnectionError(err: { code?: unknown } | null | undefined): boolean {
  const code = typeof err?.code === 'string' ? err.code : '';
  return (
    code.startsWith('HPE_') ||
    ['ERR_HTTP_REQUEST_TIMEOUT', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE'].includes(code)
  );
}

export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, log: Logger): void {
  // The err carries the raw request (rawPacket: API key and cookie included): only its code is logged.
  log.debug({ code: err.code }, 'malformed or incomplete request');
  const pending = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  // As Node: answer only if nothing of a response has gone out on this connection yet.
  if (err.code !== 'ECONNRESET' && socket.writable && !pending?.headersSent) {
    const [code, message] = ANSWERS[err.code ?? ''] ?? MALFORMED;
    const status = statusOf(code);
    const body = JSON.stringify({ error: { code, message } });
    (socket as { [ANSWERED]?: number })[ANSWERED] = status;
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
