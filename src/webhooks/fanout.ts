import { GroupCommit } from '../db/group-commit';
import { statement } from '../db/query';
import type { Deps } from '../deps';
import type { AttemptResult } from './outbound-http';
import { AttemptTarget, DELIVER_JOB_MAX_ATTEMPTS, DeliverOptions, sendAttempt } from './delivery';
import type { JobName } from '../db/jobs';
import { retryDelayAfter } from './policy';

export interface EventPayload {
  eventId: string;
  type: string;
  agentId: string;
  data: Record<string, unknown>;
  occurredAt: string;
}

export function isEventPayload(x: unknown): x is EventPayload {
  const p = x as Record<keyof EventPayload, unknown> | null;
  return (
    !!p &&
    typeof p.eventId === 'string' &&
    typeof p.type === 'string' &&
    typeof p.agentId === 'string' &&
    typeof p.occurredAt === 'string' &&
    typeof p.data === 'object' &&
    p.data !== null
  );
}

/** A webhook the event is to be sent to for the first time, with what the attempt needs. */
export type FirstAttempt = AttemptTarget;

/** The first attempt's outcome: recorded as succeeded, recorded as failed with a retry queued, or already recorded. */
export type FirstOutcome = 'succeeded' | 'retrying' | 'skipped';

/** A row of the read of pending webhooks (PENDING_SQL). */
interface PendingRow {
  n: string | number;
  webhook_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_until: Date | string | null;
  payload: unknown;
}

/**
 * Takes the events' ids, agents, types and bodies (4 arrays); see pendingWebhooks. The arrays are
 * unnested from a materialized row, not from the parameters themselves: PostgreSQL then estimates
 * the same row count with any values, so the cached generic plan is used. Unnested straight from
 * the parameters, a custom plan estimated with the arrays' true (small) length always looked
 * cheaper, and every run (this read's and webhooks_record_and_pending's) was planned again.
 */
const PENDING_SQL = `with pe as materialized (select ?::text[] id, ?::uuid[] agent, ?::text[] type, ?::jsonb[] payload)
   select e.n, w.id webhook_id, w.url, w.secret_enc, w.previous_secret_enc, w.previous_secret_until, e.payload
   from pe, unnest(pe.id, pe.agent, pe.type, pe.payload) with ordinality as e(id, agent, type, payload, n)
   join webhooks w on w.agent_id = e.agent and w.enabled and e.type = any(w.events)
   where w.id <> all (array(select d.webhook_id from webhook_deliveries d where d.event_id = e.id))`;

const PENDING_WEBHOOKS = statement<PendingRow>('webhooks_fanout_pending', PENDING_SQL);

function eventBody(e: EventPayload): string {
  return JSON.stringify({ type: e.type, timestamp: e.occurredAt, data: { agentId: e.agentId, ...e.data } });
}

/**
 * The webhooks each event still has to be sent to: every enabled webhook of the agent subscribed
 * to the type that has no delivery of the event yet (a delivery is recorded with its first
 * attempt, so on a rerun after a crash those are the ones whose first attempt was never
 * recorded). One read for all the events; nothing is written before the attempts. The payload
 * comes back as jsonb gives it, so the first attempt sends the same bytes as every later one
 * (read from the stored event). Deliveries are looked up by event alone, which only the
 * (event_id, webhook_id) index serves: written as a `not exists` on both columns, the plan cached
 * while the table was young probed the webhook's index and read every delivery the webhook ever
 * had, for each event (15 ms an event at 20,000 deliveries).
 */
export async function pendingWebhooks(deps: Pick<Deps, 'query'>, events: EventPayload[]): Promise<FirstAttempt[][]> {
  if (events.length === 0) return [];
  return pendingOf(events, (await deps.query(PENDING_WEBHOOKS, pendingParams(events))).rows);
}

function pendingParams(events: EventPayload[]): unknown[] {
  return [events.map((e) => e.eventId), events.map((e) => e.agentId), events.map((e) => e.type), events.map(eventBody)];
}

/** The rows of PENDING_SQL as each event's first attempts. */
function pendingOf(events: EventPayload[], rows: PendingRow[]): FirstAttempt[][] {
  const out: FirstAttempt[][] = events.map(() => []);
  for (const row of rows) {
    const i = Number(row.n) - 1;
    out[i].push({
      eventId: events[i].eventId,
      webhookId: row.webhook_id,
      url: row.url,
      secretEnc: row.secret_enc,
      previousSecretEnc: row.previous_secret_enc,
      // As JSON (RECORD_AND_PENDING) the time is a string.
      previousSecretUntil: row.previous_secret_until === null ? null : new Date(row.previous_secret_until),
      payload: row.payload,
    });
  }
  return out;
}

/** One first attempt to record: its event, its webhook and what the attempt got. */
export interface FirstAttemptRecord {
  event: EventPayload;
  webhookId: string;
  result: AttemptResult;
}

/** Takes the records' 10 arrays and 4 values (recordParams); see recordFirstAttempts. */
const RECORD_CTES = `p as (select ?::text[] ev, ?::text[] type, ?::uuid[] agent, ?::jsonb[] payload, ?::timestamptz[] at,
                     ?::uuid[] hook, ?::bool[] ok, ?::int[] code, ?::int[] latency, ?::text[] error,
                     ?::timestamptz now, ?::timestamptz next, ?::text task, ?::int max_attempts,
                     set_config('synchronous_commit', 'off', true) async_commit),
   r as (
     select u.* from p, unnest(p.ev, p.type, p.agent, p.payload, p.at, p.hook, p.ok, p.code, p.latency, p.error)
       as u(ev, type, agent, payload, at, hook, ok, code, latency, error)
   ),
   ev as (
     insert into webhook_events (id, type, agent_id, payload, occurred_at)
     select distinct on (r.ev) r.ev, r.type, r.agent, r.payload, r.at from r
     on conflict (id) do nothing
   ),
   ins as (
     insert into webhook_deliveries
       (event_id, webhook_id, status, step, attempts, response_code, latency_ms, last_error, next_attempt_at, updated_at)
     select r.ev, r.hook, case when r.ok then 'succeeded' else 'pending' end, 1, 1, r.code, r.latency, r.error,
            case when r.ok then null else p.next end, p.now
     from r, p
     where exists (select 1 from webhooks w where w.id = r.hook)
     on conflict (event_id, webhook_id) do nothing
     returning id, event_id, webhook_id, status, response_code, latency_ms, last_error
   ),
   att as (
     insert into webhook_delivery_attempts (delivery_id, token, attempt, ok, response_code, latency_ms, error, created_at)
     select ins.id, 'step:1', 1, ins.status = 'succeeded', ins.response_code, ins.latency_ms, ins.last_error, p.now
     from ins, p
     returning delivery_id
   ),
   jobs as (
     select graphile_worker.add_job(p.task, json_build_object('deliveryId', ins.id, 'step', 2),
              run_at => p.next, max_attempts => p.max_attempts) j
     from ins, p where ins.status = 'pending'
   ),
   hooks as (
     update webhooks w set consecutive_failures = 0, last_success_at = p.now
     from p
     where w.id in (select webhook_id from ins where status = 'succeeded')
       and (w.consecutive_failures <> 0 or w.last_success_at is null
            or w.last_success_at < p.now - interval '1 minute' or w.last_success_at > p.now)
     returning w.id
   )`;

/** What the record of first attempts answers: the keys (event, webhook) of the deliveries it created. */
const RECORD_RESULT = `array(select event_id || ' ' || webhook_id from ins) keys, (select count(*) from att) att,
          (select count(*) from jobs) jobs, (select count(*) from hooks) hooks`;

const RECORD_FIRST_ATTEMPTS = statement<{ keys: string[] }>(
  'webhooks_record_first_attempts',
  `with ${RECORD_CTES}
   select ${RECORD_RESULT}`,
);

/**
 * Both in one statement: first attempts recorded, and the webhooks other events still have to
 * be sent to (as JSON; the read's snapshot is the statement's, so it sees none of the rows the
 * record writes, which are for other events: an event is read before its attempts and recorded
 * after them).
 */
const RECORD_AND_PENDING = statement<{ keys: string[]; pending: PendingRow[] }>(
  'webhooks_record_and_pending',
  `with ${RECORD_CTES},
   pend as (${PENDING_SQL})
   select ${RECORD_RESULT}, (select coalesce(json_agg(pend), '[]') from pend) pending`,
);

/**
 * Records first attempts in one statement: the event (once), per attempt its delivery (step 1,
 * its latest attempt's code, latency and error), the attempt row (token `step:1`), for a failure
 * the job of the second attempt at its own runAt (the retry schedule, not graphile's backoff),
 * and for a success the webhook's state (only when that changes it, to the minute, so a busy
 * webhook's row is not rewritten by every delivery). A delivery already recorded is skipped (a
 * rerun records nothing twice), and so is a webhook deleted since. Outcomes in the order given.
 *
 * The statement commits without waiting for its WAL to reach the disk (`synchronous_commit` off
 * for its own transaction only): the fan-out job's completion, a synchronous commit made after it,
 * flushes the WAL up to itself and so this record with it. A database crash before that loses the
 * record and the job's completion together, and the job's rerun sends again (at-least-once, as for
 * a crash between the POST and the record). It keeps the disk flush, which waits behind every
 * other database's WAL on a shared server, off the path of each delivery (10-13 ms a record at load
 * 9, with other benches writing; 1.6 ms without it).
 */
export async function recordFirstAttempts(deps: Deps, records: FirstAttemptRecord[]): Promise<FirstOutcome[]> {
  if (records.length === 0) return [];
  const r = await deps.query(RECORD_FIRST_ATTEMPTS, recordParams(deps, records));
  return outcomesOf(records, r.rows[0].keys);
}

function recordParams(deps: Deps, records: FirstAttemptRecord[]): unknown[] {
  const now = deps.now();
  const nextAt = new Date(now.getTime() + retryDelayAfter(1)!);
  return [
    records.map((a) => a.event.eventId),
    records.map((a) => a.event.type),
    records.map((a) => a.event.agentId),
    records.map((a) => eventBody(a.event)),
    records.map((a) => a.event.occurredAt),
    records.map((a) => a.webhookId),
    records.map((a) => a.result.ok),
    records.map((a) => a.result.responseCode),
    records.map((a) => a.result.latencyMs),
    records.map((a) => a.result.error?.slice(0, 500) ?? null),
    now,
    nextAt,
    'webhook_deliver' satisfies JobName,
    DELIVER_JOB_MAX_ATTEMPTS,
  ];
}

function outcomesOf(records: FirstAttemptRecord[], keys: string[]): FirstOutcome[] {
  const recorded = new Set(keys);
  return records.map((a) =>
    !recorded.has(`${a.event.eventId} ${a.webhookId}`) ? 'skipped' : a.result.ok ? 'succeeded' : 'retrying',
  );
}

/**
 * Records first attempts (recordFirstAttempts) and reads the webhooks other events still have
 * to reach (pendingWebhooks) in one statement, RECORD_AND_PENDING, when both are asked; else in
 * the one asked. An event's webhooks are read before its attempts and recorded after them, so
 * none of `events` is among `records`.
 */
export async function recordAndReadPending(
  deps: Deps,
  records: FirstAttemptRecord[],
  events: EventPayload[],
): Promise<{ outcomes: FirstOutcome[]; pending: FirstAttempt[][] }> {
  if (records.length === 0) return { outcomes: [], pending: await pendingWebhooks(deps, events) };
  if (events.length === 0) return { outcomes: await recordFirstAttempts(deps, records), pending: [] };
  const r = await deps.query(RECORD_AND_PENDING, [...recordParams(deps, records), ...pendingParams(events)]);
  return { outcomes: outcomesOf(records, r.rows[0].keys), pending: pendingOf(events, r.rows[0].pending) };
}

/**
 * Per Deps (the worker process has one), the fan-outs running at the same time share their
 * statements: one statement at a time reads their webhooks and records their attempts together
 * (one commit). With one webhook per event at concurrency 16 (bench/fanout.ts), a statement's own
 * cost outweighs its items': reads and records in one queue took 0.32 statements per delivery
 * instead of 0.49 in two, and 30 µs of node and 20 of PostgreSQL CPU less per delivery.
 */
const groups = new WeakMap<Deps, GroupCommit<FanoutOp, FanoutAnswer>>();

/** A fan-out's request to the statement it shares: the read of an event's webhooks, or the record of an attempt. */
type FanoutOp = { read: EventPayload } | { record: FirstAttemptRecord };
type FanoutAnswer = FirstAttempt[] | FirstOutcome;

async function runFanoutOps(deps: Deps, ops: FanoutOp[]): Promise<FanoutAnswer[]> {
  const events: EventPayload[] = [];
  const records: FirstAttemptRecord[] = [];
  for (const op of ops)
    if ('read' in op) events.push(op.read);
    else records.push(op.record);
  const { outcomes, pending } = await recordAndReadPending(deps, records, events);
  let e = 0;
  let a = 0;
  return ops.map((op) => ('read' in op ? pending[e++] : outcomes[a++]));
}

function groupOf(deps: Deps) {
  let g = groups.get(deps);
  if (!g) groups.set(deps, (g = new GroupCommit((ops) => runFanoutOps(deps, ops))));
  return g;
}

/**
 * The fan-out of one event: the webhooks it still has to reach (pendingWebhooks), their first
 * attempts sent at once, each recorded as soon as it ends (recordFirstAttempts), so a slow
 * receiver does not hold back the record of the others; the read and the records are statements
 * shared with the fan-outs running at the same time. Nothing is written before an attempt: a
 * crash before its record leaves the event without that delivery, and the rerun of the fan-out
 * job sends it again (at-least-once). Later attempts are `webhook_deliver` jobs
 * (src/webhooks/delivery.ts). Never throws for HTTP failures; a database error throws (once every
 * attempt has ended, so a rerun never overlaps them) and lets graphile retry the job. Events
 * nobody subscribed to are not stored.
 */
export async function fanoutEvent(deps: Deps, e: EventPayload, opts: DeliverOptions = {}): Promise<FirstOutcome[]> {
  const g = groupOf(deps);
  const [targets] = (await g.run([{ read: e }])) as FirstAttempt[][];
  const settled = await Promise.allSettled(
    targets.map(async (t) => {
      const result = await sendAttempt(deps, t, opts);
      const [outcome] = (await g.run([{ record: { event: e, webhookId: t.webhookId, result } }])) as FirstOutcome[];
      return outcome;
    }),
  );
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<FirstOutcome>).value);
}
