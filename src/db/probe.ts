import pg from 'pg';

/**
 * One connection attempt with a short timeout, closed at once. The CLI runs it before building
 * the pool so that a missing database is one line within about a second, not the pool's
 * acquire timeout and its warning.
 */
export async function probeDatabase(connectionString: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs });
  try {
    await client.connect();
  } finally {
    await client.end().catch(() => undefined);
  }
}
