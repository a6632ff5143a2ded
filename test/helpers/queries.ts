import { getContext } from './context';

/** Runs `fn` and returns the SQL statements that went through the app's knex instance meanwhile. */
export async function queries<T>(fn: () => Promise<T>): Promise<{ n: number; sql: string[]; value: T }> {
  const { db } = await getContext();
  const sql: string[] = [];
  const on = (q: { sql: string }) => sql.push(q.sql);
  db.on('query', on);
  try {
    const value = await fn();
    return { n: sql.length, sql, value };
  } finally {
    db.removeListener('query', on);
  }
}
