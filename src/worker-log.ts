import { Logger as WorkerLogger } from 'graphile-worker';
import type { Logger } from './log';

const LEVELS = { error: 'error', warning: 'warn', info: 'info', debug: 'debug' } as const;

/**
 * graphile-worker's own lines (job failures, connection errors) written through pino, so the
 * process prints one JSON log stream instead of plain text interleaved with JSON.
 */
export function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const pinoLevel = LEVELS[level as keyof typeof LEVELS] ?? 'info';
    log[pinoLevel]({ worker: scope, ...meta }, message);
  });
}
