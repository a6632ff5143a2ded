import type { Deps } from '../deps';

/** Secrets embedded in an email body (verification tokens and links carrying them). */
const TOKEN_RE = /svc_[a-z]+_[A-Za-z0-9_-]{20,}/g;

export function redactTokens(text: string): string {
  return text.replace(TOKEN_RE, (t) => t.slice(0, t.indexOf('_', 4) + 1) + '[redacted]');
}

/**
 * Delivers one outbox email. No mail transport exists yet: outside production the message (with
 * its link) goes to the log so a developer can follow it, and the row is marked sent with its
 * token redacted, so the outbox keeps no live secret. In production the token is never logged:
 * the row stays pending for a real transport and an admin can verify by CLI meanwhile.
 * Idempotent: an already-sent row is left alone.
 */
export async function sendOutboxEmail(deps: Deps, id: string): Promise<'sent' | 'already_sent' | 'missing' | 'no_transport'> {
  return deps.db.transaction(async (trx) => {
    const row = await trx('email_outbox').where({ id }).forUpdate().first();
    if (!row) return 'missing';
    if (row.sent_at) return 'already_sent';
    if (deps.config.nodeEnv === 'production') {
      deps.log.warn({ emailId: id, kind: row.kind }, 'email_outbox_send: no mail transport configured; email left pending');
      return 'no_transport';
    }
    deps.log.info({ emailId: id, to: row.to_address, kind: row.kind, subject: row.subject, links: row.body.match(/https?:\/\/\S+/g) ?? [] }, `email to ${row.to_address}:\n${row.body}`);
    await trx('email_outbox').where({ id }).update({ sent_at: deps.now(), body: redactTokens(row.body) });
    return 'sent';
  });
}
