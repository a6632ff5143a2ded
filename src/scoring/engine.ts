import type { Knex } from 'knex';
import { BIT, EdgeBatch, maskToCodes } from './weights';
import { runBatch } from './pool';
import { DAY_MS, SCHEDULE, WEIGHTS } from './policy';

/**
 * Weighted edges: SQL gathers per-interaction facts with joins and window functions, the pure
 * `computeBatch` turns them into weights in the piscina pool, and one transaction writes them.
 *
 * Full mode scores every active interaction of the 90-day window. Scoped mode scores every
 * interaction received by a set of target agents: all partitions a rule looks at (the pair
 * actor→target, the target post/comment, the brigade group) belong to one target agent, so they
 * are complete; per-actor facts (ring, diversity, outgoing totals) are looked up in full.
 */

type Db = Knex | Knex.Transaction;

/** Transaction-level advisory lock key serialising every scoring write (any process). */
export const SCORING_LOCK = 0x5c0e1;

export async function lockScoring(trx: Knex.Transaction): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(?)', [SCORING_LOCK]);
  // Batches over millions of rows outlive the pool's default statement timeout.
  await trx.raw('set local statement_timeout = 0');
}

export function windowStart(now: Date): Date {
  return new Date(now.getTime() - WEIGHTS.windowDays * DAY_MS);
}

/** Facts SQL. `:scoped` restricts the scored rows to interactions received by $targets. */
function factsSql(scoped: boolean): string {
  const inScope = scoped ? 'and i.target_agent_id = any(:targets::uuid[])' : '';
  const actorScope = scoped ? 'and i.actor_agent_id in (select a from scope_actors)' : '';
  const extScope = scoped ? 'and i.target_agent_id in (select a from scope_actors)' : '';
  return `
  with ag as (
    select a.id, coalesce(a.owner_id, a.id) own, a.owner_id, a.status = 'suspended' susp, a.created_at,
           (o.email_verified_at is not null) verified
    from agents a left join owners o on o.id = a.owner_id
  ),
  r as (
    select i.* from interactions i
    where i.active and i.occurred_at > :ws and i.occurred_at <= :now ${inScope}
  ),
  scope_actors as (select distinct actor_agent_id a from r union select distinct target_agent_id from r),
  win as (
    select i.kind, i.actor_agent_id, i.target_agent_id from interactions i
    where i.active and i.occurred_at > :ws and i.occurred_at <= :now and i.actor_agent_id <> i.target_agent_id ${actorScope}
  ),
  pc as (select actor_agent_id a, target_agent_id t, kind, count(*) c from win where kind in ('vote', 'reply') group by 1, 2, 3),
  oc as (select a, kind, sum(c) c from pc group by 1, 2),
  recip as (
    select p.a, p.t, p.kind from pc p
    join pc q on q.a = p.t and q.t = p.a and q.kind = p.kind
    join oc oa on oa.a = p.a and oa.kind = p.kind
    join oc ot on ot.a = p.t and ot.kind = p.kind
    where p.c >= ${WEIGHTS.reciprocalMinEach} and q.c >= ${WEIGHTS.reciprocalMinEach}
      and p.c >= ${WEIGHTS.reciprocalMinShare} * oa.c and q.c >= ${WEIGHTS.reciprocalMinShare} * ot.c
  ),
  fol as (select actor_agent_id a, target_agent_id t from win where kind = 'follow'),
  folall as (
    select i.actor_agent_id a, i.target_agent_id t from interactions i
    where i.kind = 'follow' and i.active and i.occurred_at > :ws and i.occurred_at <= :now
  ),
  ring as (
    select f.a from fol f left join folall b on b.a = f.t and b.t = f.a
    group by f.a
    having count(*) >= ${WEIGHTS.followRingMinFollows} and count(b.a) >= ${WEIGHTS.followRingMinShare} * count(*)
  ),
  ext as (
    select i.target_agent_id a, count(distinct aa.own) n
    from interactions i join ag aa on aa.id = i.actor_agent_id join ag ta on ta.id = i.target_agent_id
    where i.active and i.occurred_at > :ws and i.occurred_at <= :now and aa.own <> ta.own
      and ((i.kind = 'vote' and i.value = 1) or i.kind in ('reply', 'follow')) ${extScope}
    group by 1
  )
  select r.id,
    case r.kind when 'vote' then 0 when 'reply' then 1 when 'follow' then 2 else 3 end kind,
    r.value,
    extract(epoch from r.occurred_at)::float8 t,
    (case when aa.susp or ta.susp then ${BIT.SUSPENDED} else 0 end)
    | (case when r.kind <> 'follow' and (p.deleted_at is not null or c.deleted_at is not null) then ${BIT.DELETED_TARGET} else 0 end)
    | (case when r.actor_agent_id = r.target_agent_id then ${BIT.SELF} else 0 end)
    | (case when r.actor_agent_id <> r.target_agent_id and aa.owner_id is not null and aa.owner_id = ta.owner_id then ${BIT.SAME_OWNER} else 0 end)
    | (case when row_number() over (partition by r.kind, case when r.kind = 'follow' then r.target_agent_id else coalesce(r.comment_id, r.post_id) end, aa.own
                                    order by r.occurred_at, r.id) > 1 then ${BIT.OWNER_DUPLICATE} else 0 end)
    | (case when r.kind = 'reply' and rc.score < 0 then ${BIT.LOW_SCORE_REPLY} else 0 end)
    | (case when recip.a is not null then ${BIT.RECIPROCAL_PATTERN} else 0 end)
    | (case when r.kind = 'follow' and ring.a is not null then ${BIT.FOLLOW_RING} else 0 end) flags,
    case when r.kind in ('vote', 'reply') then row_number() over (partition by r.actor_agent_id, r.target_agent_id, r.kind order by r.occurred_at, r.id) else 0 end pair_k,
    case when aa.verified then 1 else 0 end verified,
    (extract(epoch from r.occurred_at - aa.created_at) / 86400)::float4 age_days,
    coalesce(ext.n, 0) ext_owners,
    case when r.kind = 'vote' then r.post_id end post_id,
    case when r.kind = 'vote' then r.comment_id end comment_id,
    r.target_agent_id
  from r
  join ag aa on aa.id = r.actor_agent_id
  join ag ta on ta.id = r.target_agent_id
  left join posts p on p.id = r.post_id
  left join comments c on c.id = r.comment_id
  left join comments rc on rc.id = r.reply_comment_id
  left join recip on recip.a = r.actor_agent_id and recip.t = r.target_agent_id and recip.kind = r.kind
  left join ring on ring.a = r.actor_agent_id
  left join ext on ext.a = r.actor_agent_id`;
}

export interface WeightRunResult {
  mode: 'full' | 'scoped';
  interactions: number;
  brigadeFlags: number;
  ms: { facts: number; compute: number; write: number };
}

/** Builds pool batches; rows of one brigade group (target object, direction) stay in one batch. */
function buildBatches(rows: any[][]): { order: Int32Array; batches: { from: number; to: number; batch: EdgeBatch }[] } {
  const n = rows.length;
  const groupOf = new Int32Array(n).fill(-1);
  const groups = new Map<string, number>();
  for (let r = 0; r < n; r++) {
    const row = rows[r];
    if (row[1] !== 0) continue;
    const key = (row[10] ?? row[9]) + (row[2] > 0 ? '+' : '-');
    let g = groups.get(key);
    if (g === undefined) {
      g = groups.size;
      groups.set(key, g);
    }
    groupOf[r] = g;
  }
  // Counting sort by group: non-votes first, then each group contiguous.
  const G = groups.size;
  const counts = new Int32Array(G + 1);
  for (let r = 0; r < n; r++) counts[groupOf[r] + 1]++;
  const starts = new Int32Array(G + 1);
  for (let g = 1; g <= G; g++) starts[g] = starts[g - 1] + counts[g - 1];
  const order = new Int32Array(n);
  for (let r = 0; r < n; r++) order[starts[groupOf[r] + 1]++] = r;

  const batches: { from: number; to: number; batch: EdgeBatch }[] = [];
  let from = 0;
  while (from < n) {
    let to = Math.min(n, from + SCHEDULE.poolChunk);
    while (to < n && to > from && groupOf[order[to]] >= 0 && groupOf[order[to]] === groupOf[order[to - 1]]) to++;
    const m = to - from;
    const b: EdgeBatch = {
      kind: new Uint8Array(m),
      flags: new Int32Array(m),
      pairK: new Int32Array(m),
      verified: new Uint8Array(m),
      ageDays: new Float32Array(m),
      extOwners: new Int32Array(m),
      group: new Int32Array(m),
      t: new Float64Array(m),
    };
    for (let k = 0; k < m; k++) {
      const r = order[from + k];
      const row = rows[r];
      b.kind[k] = row[1];
      b.t[k] = row[3];
      b.flags[k] = row[4];
      b.pairK[k] = row[5];
      b.verified[k] = row[6];
      b.ageDays[k] = row[7];
      b.extOwners[k] = row[8];
      b.group[k] = groupOf[r];
    }
    batches.push({ from, to, batch: b });
    from = to;
  }
  return { order, batches };
}

/**
 * Scores interactions and writes scoring_edges (and brigade flags) inside `trx`, which holds
 * the scoring lock. `targets` null: full recompute (the table is rewritten).
 */
export async function recomputeWeights(trx: Knex.Transaction, now: Date, targets: string[] | null): Promise<WeightRunResult> {
  const t0 = Date.now();
  const ws = windowStart(now);
  const scoped = targets !== null;
  const res: any = await (trx.raw(factsSql(scoped), scoped ? { ws, now, targets } : { ws, now }) as any).options({ rowMode: 'array' });
  const rows: any[][] = res.rows;
  const t1 = Date.now();
  const n = rows.length;
  const weights = new Float32Array(n);
  const masks = new Int32Array(n);
  const { order, batches } = buildBatches(rows);
  await Promise.all(
    batches.map(async ({ from, batch }) => {
      const out = await runBatch(batch);
      for (let k = 0; k < out.weights.length; k++) {
        const r = order[from + k];
        weights[r] = out.weights[k];
        masks[r] = out.masks[k];
      }
    }),
  );
  const t2 = Date.now();

  if (!scoped) await trx.raw('truncate scoring_edges');
  const maskCodes = new Map<number, string>();
  for (let r = 0; r < n; r++) if (!maskCodes.has(masks[r])) maskCodes.set(masks[r], maskToCodes(masks[r]).join(','));
  const maskKeys = [...maskCodes.keys()];
  const maskVals = maskKeys.map((k) => maskCodes.get(k)!);
  const CH = 200_000;
  for (let s = 0; s < n; s += CH) {
    const e = Math.min(n, s + CH);
    const ids: number[] = new Array(e - s);
    const ws2: number[] = new Array(e - s);
    const ms: number[] = new Array(e - s);
    for (let r = s; r < e; r++) {
      ids[r - s] = rows[r][0];
      ws2[r - s] = Math.round(weights[r] * 1e6) / 1e6;
      ms[r - s] = masks[r];
    }
    await trx.raw(
      `insert into scoring_edges (interaction_id, weight, reasons, computed_at)
       select u.id, u.w, string_to_array(m.codes, ','), :now
       from unnest(:ids::bigint[], :ws::real[], :ms::int[]) u(id, w, mask)
       join unnest(:mk::int[], :mv::text[]) m(mask, codes) on m.mask = u.mask
       ${scoped ? 'on conflict (interaction_id) do update set weight = excluded.weight, reasons = excluded.reasons, computed_at = excluded.computed_at' : ''}`,
      { now, ids, ws: ws2, ms, mk: maskKeys, mv: maskVals },
    );
  }
  // A rewritten table has no statistics yet: without them the reputation join plans nested loops.
  if (!scoped) await trx.raw('analyze scoring_edges');
  const flags = await writeBrigadeFlags(trx, rows, masks, now);
  const t3 = Date.now();
  return { mode: scoped ? 'scoped' : 'full', interactions: n, brigadeFlags: flags, ms: { facts: t1 - t0, compute: t2 - t1, write: t3 - t2 } };
}

/** One flag per (post or comment, direction) with brigaded votes; re-detection refreshes it. */
async function writeBrigadeFlags(trx: Db, rows: any[][], masks: Int32Array, now: Date): Promise<number> {
  const byTarget = new Map<string, { post: string | null; comment: string | null; target: string; dir: number; votes: number; first: number; last: number }>();
  for (let r = 0; r < rows.length; r++) {
    if (!(masks[r] & BIT.BRIGADE_PATTERN)) continue;
    const row = rows[r];
    const dir = row[2] > 0 ? 1 : -1;
    const key = `${row[9]}|${row[10]}|${dir}`;
    const f = byTarget.get(key) ?? { post: row[10] ? null : row[9], comment: row[10] ?? null, target: row[11], dir, votes: 0, first: row[3], last: row[3] };
    f.votes++;
    f.first = Math.min(f.first, row[3]);
    f.last = Math.max(f.last, row[3]);
    byTarget.set(key, f);
  }
  for (const f of byTarget.values()) {
    await trx.raw(
      `insert into brigade_flags (post_id, comment_id, target_agent_id, direction, votes, first_vote_at, last_vote_at, flagged_at)
       values (?, ?, ?, ?, ?, to_timestamp(?), to_timestamp(?), ?)
       on conflict (post_id, comment_id, direction) do update set votes = excluded.votes,
         first_vote_at = excluded.first_vote_at, last_vote_at = excluded.last_vote_at, flagged_at = excluded.flagged_at`,
      [f.post, f.comment, f.target, f.dir, f.votes, f.first, f.last, now],
    );
  }
  return byTarget.size;
}

export const WATERMARK = 'scoring_incremental';

export async function getWatermark(db: Db): Promise<Date | null> {
  const row = await db('scoring_watermarks').where({ name: WATERMARK }).first();
  return row ? new Date(row.watermark) : null;
}

export async function setWatermark(db: Db, at: Date): Promise<void> {
  await db.raw(
    `insert into scoring_watermarks (name, watermark, updated_at) values (?, ?, now())
     on conflict (name) do update set watermark = greatest(scoring_watermarks.watermark, excluded.watermark), updated_at = now()`,
    [WATERMARK, at],
  );
}

/**
 * Agents whose received interactions must be rescored after the rows changed since `since`:
 * targets and actors of changed rows, and authors of replies whose comment was voted on
 * (LOW_SCORE_REPLY follows the reply's score).
 */
export async function touchedTargets(db: Db, since: Date): Promise<{ targets: string[]; changed: number }> {
  const from = new Date(since.getTime() - SCHEDULE.watermarkOverlapSeconds * 1000);
  const r = await db.raw(
    `with ch as (select * from interactions where updated_at > ?)
     select array(
       select target_agent_id from ch
       union select actor_agent_id from ch
       union select rep.target_agent_id from ch join interactions rep
         on rep.kind = 'reply' and rep.reply_comment_id = ch.comment_id
       where ch.kind = 'vote' and ch.comment_id is not null
     ) targets, (select count(*) from ch) changed`,
    [from],
  );
  return { targets: r.rows[0].targets, changed: Number(r.rows[0].changed) };
}
