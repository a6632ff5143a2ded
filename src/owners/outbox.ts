import type { Deps } from '../deps';
import { decryptSecret, encryptSecret } from '../webhooks/signing';

/** Secrets embedded in an email body (verification tokens and links carrying them). */
const TOKEN_RE = /svc_[a-z]+_[A-Za-z0-9_-]{20,}/g;

export function redactTokens(text: string): string {
  return text.replace(TOKEN_RE, (t) => t.slice(0, t.indexOf('_', 4) + 1) + '[redacted]');
}

/**
 * A pending email carries a live token, so the outbox stores its body encrypted (AES-256-GCM under
 * SESSION_SECRET, as webhook secrets are, with the row id as associated data) until it is sent,
 * and only the redacted text afterwards. A body written before this was sealed reads as it is.
 */
const SEALED_RE = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const sealedFor = (id: string) => `email_outbox:${id}`;

export function sealBody(sessionSecret: string, id: string, body: string): string {
  return encryptSecret(sessionSecret, sealedFor(id), body);
}

export function openBody(sessionSecret: string, row: { id: string; body: string }): string {
  return SEALED_RE.test(row.body) ? decryptSecret(sessionSecret, sealedFor(row.id), row.body) : row.body;
}

/**
 * Delivers one outbox email. No mail transport exists yet: outside production the message (with
 * its link) goes to the log so a developer can follow it, and the row is marked sent with its
 * token redacted, so the outbox keeps no live secret. In production the token is never logged:
 * the row stays pending for a real transport and an admin can verify by CLI meanwhile.
 * Idempotent: an already-sent row is left alone.
 */
export async function sendOutboxEmail(
  deps: Deps,
  id: string,
): Promise<'sent' | 'already_sent' | 'missing' | 'no_transport'> {
  return deps.db.transaction(async (trx) => {
    const row = await trx('email_outbox').where({ id }).forUpdate().first();
    if (!row) return 'missing';
    if (row.sent_at) return 'already_sent';
    if (deps.config.nodeEnv === 'production') {
      deps.log.warn(
        { emailId: id, kind: row.kind },
        'email_outbox_send: no mail transport configured; email left pending',
      );
      return 'no_transport';
    }
    const body = openBody(deps.config.sessionSecret, row);
    deps.log.info(
      {
        emailId: id,
        to: row.to_address,
        kind: row.kind,
        subject: row.subject,
        links: body.match(/https?:\/\/\S+/g) ?? [],
      },
      `email to ${row.to_address}:\n${body}`,
    );
    await trx('email_outbox')
      .where({ id })
      .update({ sent_at: deps.now(), body: redactTokens(body) });
    return 'sent';
  });
}
