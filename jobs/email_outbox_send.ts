import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { sendOutboxEmail } from '../src/owners/outbox';

/** Payload `{id}` of an email_outbox row; delivery is idempotent, so retries are harmless. */
export function emailOutboxSend(deps: Deps): Task<'email_outbox_send'> {
  return async (payload) => {
    const id = (payload as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || !/^[0-9a-f-]{36}$/i.test(id))
      throw new Error('email_outbox_send: payload.id must be an email_outbox uuid');
    await sendOutboxEmail(deps, id);
  };
}
