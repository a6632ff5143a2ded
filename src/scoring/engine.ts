import type { Knex } from 'knex';
import { BIT, computeBatch, EdgeBatch, maskToCodes } from './weights';
import type { ScoringPool } from './pool';
import { DAY_MS, SCHEDULE, WEIGHTS } from './policy';
import { copyIn, copyOut, encodeTextArray } from './copy';
import { withoutPreparedStatements } from '../db/prepared';

/**
 * Weighted edges. SQL stages the scored interactions once (a temporary table holding every
 * per-row fact that joins can give), derives the group facts set-based (window functions for
 * pair ranks and owner duplicates, hash aggregates for reciprocity, rings and owner diversity),
 * and streams the facts out with binary COPY; the pure `computeBatch` turns them into weights in
 * the piscina pool; binary COPY streams the weights back.
 *
 * Full mode scores every active interaction of the 90-day window and rewrites scoring_edges and
 * scoring_agent_facts. Scoped mode scores every interaction received by a set of target agents:
 * all partitions a rule looks at (the pair actor→target, the target post/comment, the brigade
 * group) belong to one target agent, so they are complete. Per-agent facts (outgoing counts,
 * owner diversity, follow ring) change only when the agent acts or is acted on: scoped mode
 * refreshes them for the touched agents and reads the stored ones of every other actor.
 */

type Db = Knex | Knex.Transaction;

/** Transaction-level advisory lock key serialising every scoring write (any process). */
export const SCORING_LOCK = 0x5c0e1;

export async function lockScoring(trx: Knex.Transaction): Promise<void> {
  withoutPreparedStatements(trx);
  await trx.raw('select pg_advisory_xact_lock(?)', [SCORING_LOCK]);
  // Batches over millions of rows outlive the pool's default statement timeout; sorts and hashes
  // of a million rows must stay in memory; JIT compiles these one-off statements for seconds.
  await trx.raw(`set local statement_timeout = 0; set local work_mem = '${SCHEDULE.workMem}';
    set local maintenance_work_mem = '${SCHEDULE.workMem}'; set local jit = off`);
}

/** Scoped runs look rows up by index: price random reads as the in-memory reads they are. */
export async function tuneScoped(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`set local random_page_cost = ${SCHEDULE.scopedRandomPageCost}`);
}

export function windowStart(now: Date): Date {
  return new Date(now.getTime() - WEIGHTS.windowDays * DAY_MS);
}

/**
 * Staging tables live in local buffers; their size can only be raised before the session's
 * first temporary table, so this tries once per connection inside a savepoint.
 */
async function tuneTempBuffers(trx: Knex.Transaction): Promise<void> {
  try {
    await trx.transaction(async (sp) => {
      await sp.raw(`set temp_buffers = '${SCHEDULE.tempBuffers}'`);
    });
  } catch {
    // Temporary tables were already used on this connection: keep its current size.
  }
}

const WINDOW = 'i.active and i.occurred_at > :ws and i.occurred_at <= :now';

/**
 * Agents as staging sees them. Full mode numbers them (n, and own_n for their owner or
 * themselves) so the staged rows carry small integers the reputation sums index by.
 */
const AGENTS_FULL_SQL = `
  create temp table sc_ag on commit drop as
  select (row_number() over ())::int4 - 1 n, a.id, coalesce(a.owner_id, a.id) own,
    (dense_rank() over (order by coalesce(a.owner_id, a.id)))::int4 own_n,
    a.owner_id, a.status = 'suspended' susp, a.created_at, (o.email_verified_at is not null) verified
  from agents a left join owners o on o.id = a.owner_id`;
const AGENTS_SCOPED = `(select 0 n, a.id, coalesce(a.owner_id, a.id) own, 0 own_n, a.owner_id, a.status = 'suspended' susp,
    a.created_at, (o.email_verified_at is not null) verified from agents a left join owners o on o.id = a.owner_id)`;

/**
 * sc_r: the scored rows with every fact one join can give (owners, statuses, deleted content,
 * reply score). The few deleted posts and comments and negative replies are tested as hashed
 * subplans (small hash sets probed inside the row's expressions) rather than as three more join
 * levels that every staged row would pass through.
 */
function stageSql(scoped: boolean): string {
  const ag = scoped ? AGENTS_SCOPED : 'sc_ag';
  return `
  create temp table sc_r on commit drop as
  select i.id,
    (case i.kind when 'vote' then 0 when 'reply' then 1 when 'follow' then 2 else 3 end)::int2 kind,
    i.actor_agent_id a, i.target_agent_id t, aa.own aown, ta.own town,
    aa.n an, ta.n tn, aa.own_n aon, ta.own_n ton,
    i.value, i.occurred_at ts,
    case when i.kind = 'follow' then i.target_agent_id else coalesce(i.comment_id, i.post_id) end obj,
    (case when i.kind in ('vote', 'reply') then 1 else 0 end)::int4 pk,
    ((case when aa.susp or ta.susp then ${BIT.SUSPENDED} else 0 end)
     | (case when i.kind <> 'follow' and (i.post_id in (select id from posts where deleted_at is not null)
                                         or i.comment_id in (select id from comments where deleted_at is not null)) then ${BIT.DELETED_TARGET} else 0 end)
     | (case when i.actor_agent_id = i.target_agent_id then ${BIT.SELF} else 0 end)
     | (case when i.actor_agent_id <> i.target_agent_id and aa.owner_id is not null and aa.owner_id = ta.owner_id then ${BIT.SAME_OWNER} else 0 end)
     | (case when i.kind = 'reply' and i.reply_comment_id in (select id from comments where score < 0) then ${BIT.LOW_SCORE_REPLY} else 0 end))::int4 flags,
    aa.verified,
    (extract(epoch from i.occurred_at - aa.created_at) / 86400)::float4 age
  from interactions i
  join ${ag} aa on aa.id = i.actor_agent_id
  join ${ag} ta on ta.id = i.target_agent_id
  where ${WINDOW} ${scoped ? 'and i.target_agent_id = any(:targets::uuid[])' : ''}`;
}

/** Full mode: every agent's facts from the staged window (hash aggregates, one self-join of follows). */
const FULL_FACTS_SQL = `
  insert into scoring_agent_facts (agent_id, out_votes, out_replies, ext_owners, follow_ring, computed_at)
  select ag.id, coalesce(o.ov, 0), coalesce(o.orp, 0), coalesce(e.n, 0), coalesce(f.ring, false), :now
  from agents ag
  left join (
    select a, count(*) filter (where kind = 0) ov, count(*) filter (where kind = 1) orp
    from sc_r where a <> t and kind in (0, 1) group by a
  ) o on o.a = ag.id
  left join (
    select r.a, count(*) >= ${WEIGHTS.followRingMinFollows} and count(b.a) >= ${WEIGHTS.followRingMinShare} * count(*) ring
    from (select a, t from sc_r where kind = 2 and a <> t) r
    left join (select a, t from sc_r where kind = 2) b on b.a = r.t and b.t = r.a
    group by r.a
  ) f on f.a = ag.id
  left join (
    select t, count(*) n from (
      select distinct t, aown from sc_r where aown <> town and ((kind = 0 and value = 1) or kind in (1, 2))
    ) d group by t
  ) e on e.t = ag.id`;

/** Scoped mode: the same facts for the agents :ids, from their own activity (index scans). */
const SCOPED_FACTS_SQL = `
  insert into scoring_agent_facts (agent_id, out_votes, out_replies, ext_owners, follow_ring, computed_at)
  select x.id, coalesce(o.ov, 0), coalesce(o.orp, 0), coalesce(e.n, 0), coalesce(o.ring, false), :now
  from unnest(:ids::uuid[]) x(id)
  left join (
    select i.actor_agent_id a, count(*) filter (where i.kind = 'vote') ov, count(*) filter (where i.kind = 'reply') orp,
      count(*) filter (where i.kind = 'follow') >= ${WEIGHTS.followRingMinFollows}
        and count(b.id) >= ${WEIGHTS.followRingMinShare} * count(*) filter (where i.kind = 'follow') ring
    from interactions i
    left join interactions b on i.kind = 'follow' and b.kind = 'follow' and b.actor_agent_id = i.target_agent_id
      and b.target_agent_id = i.actor_agent_id and b.active and b.occurred_at > :ws and b.occurred_at <= :now
    where i.actor_agent_id = any(:ids::uuid[]) and ${WINDOW} and i.actor_agent_id <> i.target_agent_id
      and i.kind in ('vote', 'reply', 'follow')
    group by 1
  ) o on o.a = x.id
  left join (
    select i.target_agent_id t, count(distinct coalesce(aa.owner_id, aa.id)) n
    from interactions i join agents aa on aa.id = i.actor_agent_id join agents ta on ta.id = i.target_agent_id
    where i.target_agent_id = any(:ids::uuid[]) and ${WINDOW}
      and coalesce(aa.owner_id, aa.id) <> coalesce(ta.owner_id, ta.id)
      and ((i.kind = 'vote' and i.value = 1) or i.kind in ('reply', 'follow'))
    group by 1
  ) e on e.t = x.id
  on conflict (agent_id) do update set out_votes = excluded.out_votes, out_replies = excluded.out_replies,
    ext_owners = excluded.ext_owners, follow_ring = excluded.follow_ring, computed_at = excluded.computed_at`;

/**
 * Pairs (actor, target, kind) of votes or replies with enough staged rows to matter: from the
 * reciprocity threshold (≥ 3 each way) or beyond the free repeats of PAIR_REPEAT. One hash
 * aggregate; every other pair is neither reciprocal nor repeated.
 */
const PAIRS_SQL = `
  create temp table sc_pc on commit drop as
  select a, t, kind, count(*) c from sc_r where kind in (0, 1)
  group by 1, 2, 3 having count(*) >= ${Math.min(WEIGHTS.reciprocalMinEach, WEIGHTS.pairRepeatFree + 1)}`;

/**
 * RECIPROCAL_PATTERN: ≥ 3 each way and each direction ≥ 50 % of its actor's outgoing of that
 * kind. The reverse direction is counted for the candidate pairs only (from the staged pairs in
 * full mode, by index otherwise); matching rows get the bit.
 */
function recipSql(scoped: boolean): string {
  const share = (side: string, c: string) =>
    `${c} >= ${WEIGHTS.reciprocalMinShare} * (case p.kind when 0 then ${side}.out_votes else ${side}.out_replies end)`;
  const rev = scoped
    ? `select p.a, p.t, p.kind, p.c, count(*) qc from pc p
       join interactions i on i.actor_agent_id = p.t and i.target_agent_id = p.a
         and i.kind = (case p.kind when 0 then 'vote' else 'reply' end) and ${WINDOW}
       group by 1, 2, 3, 4 having count(*) >= ${WEIGHTS.reciprocalMinEach}`
    : `select p.a, p.t, p.kind, p.c, q.c qc from pc p join pc q on q.a = p.t and q.t = p.a and q.kind = p.kind`;
  return `
  with pc as (select * from sc_pc where a <> t and c >= ${WEIGHTS.reciprocalMinEach}),
  rev as (${rev}),
  recip as (
    select p.a, p.t, p.kind from rev p
    join scoring_agent_facts fa on fa.agent_id = p.a
    join scoring_agent_facts ft on ft.agent_id = p.t
    where ${share('fa', 'p.c')} and ${share('ft', 'p.qc')}
  )
  insert into sc_recip select * from recip`;
}

const RECIP_FLAG_SQL = `
  update sc_r r set flags = r.flags | ${BIT.RECIPROCAL_PATTERN}
  from sc_recip x where x.a = r.a and x.t = r.t and x.kind = r.kind`;

/** PAIR_REPEAT ranks (> 1), for the pairs past the free repeats only (ranks within them are all free: 1). */
const PAIR_RANKS_SQL = `
  create temp table sc_pk on commit drop as
  select id, k from (
    select r.id, (row_number() over (partition by r.a, r.t, r.kind order by r.ts, r.id))::int4 k
    from sc_r r join sc_pc p on p.a = r.a and p.t = r.t and p.kind = r.kind
    where p.c > ${WEIGHTS.pairRepeatFree}
  ) x where k > 1`;

/** OWNER_DUPLICATE: all but the first interaction of one owner on one object; only groups of ≥ 2 are ranked. */
const OWNER_DUP_SQL = `
  create temp table sc_dup on commit drop as
  select id from (
    select r.id, row_number() over (partition by r.obj, r.kind, r.aown order by r.ts, r.id) k
    from sc_r r join (select obj, kind, aown from sc_r group by 1, 2, 3 having count(*) > 1) d
      on d.obj = r.obj and d.kind = r.kind and d.aown = r.aown
  ) z where z.k > 1`;

/** Brigade groups: one id per voted post or comment (the direction is added in the facts). */
const GROUPS_SQL = `
  create temp table sc_grp on commit drop as
  select obj, (row_number() over ())::int4 g from (select obj from sc_r where kind = 0 group by obj) x`;

/** The facts streamed to the pure weights: one row per staged interaction. */
const FACTS_SELECT = `
  select r.id::int8, r.kind,
    (r.flags
     | (case when r.kind = 2 and fa.follow_ring then ${BIT.FOLLOW_RING} else 0 end)
     | (case when r.id in (select id from sc_dup) then ${BIT.OWNER_DUPLICATE} else 0 end))::int4,
    coalesce(pk.k, r.pk), r.verified, r.age, coalesce(fa.ext_owners, 0)::int4,
    (case when r.kind = 0 then 2 * g.g + (case when r.value > 0 then 1 else 0 end) else -1 end)::int4,
    extract(epoch from r.ts)::float8, r.value::int2, r.an, r.tn, r.aon, r.ton
  from sc_r r
  left join scoring_agent_facts fa on fa.agent_id = r.a
  left join sc_grp g on r.kind = 0 and g.obj = r.obj
  left join sc_pk pk on pk.id = r.id`;

const FACT_COLUMNS = {
  id: 'int8',
  kind: 'int2',
  flags: 'int4',
  pk: 'int4',
  verified: 'bool',
  age: 'float4',
  ext: 'int4',
  grp: 'int4',
  t: 'float8',
  value: 'int2',
  an: 'int4',
  tn: 'int4',
  aon: 'int4',
  ton: 'int4',
} as const;

/**
 * Inputs of reputation_v1 summed from the weights of a full run, per agent number of sc_ag:
 * weighted upvotes, downvotes, replies received and authored, followers; distinct other owners
 * with a weighted upvote, and in weighted conversations. (The same sums as the SQL of
 * recomputeReputations, without reading a million weights back.)
 */
export interface ReputationSums {
  up: Float64Array;
  down: Float64Array;
  rr: Float64Array;
  ra: Float64Array;
  fol: Float64Array;
  extOwners: Int32Array;
  counterparts: Int32Array;
}

export interface WeightRunResult {
  mode: 'full' | 'scoped';
  /** edges written (scoped mode skips unchanged ones) */
  rewritten: number;
  interactions: number;
  brigadeFlags: number;
  /** agents whose stored facts were refreshed */
  agentFacts: number;
  ms: { facts: number; compute: number; write: number };
}

type Facts = Awaited<ReturnType<typeof copyOut<typeof FACT_COLUMNS>>>['cols'];

/** Pool batches; rows of one brigade group (target object, direction) stay contiguous in one batch. */
function buildBatches(f: Facts, n: number): { order: Int32Array; batches: { from: number; batch: EdgeBatch }[] } {
  let G = 0;
  for (let r = 0; r < n; r++) if (f.grp[r] >= G) G = f.grp[r] + 1;
  // Counting sort by group: non-votes (-1) first, then each group contiguous.
  const starts = new Int32Array(G + 2);
  for (let r = 0; r < n; r++) starts[f.grp[r] + 2]++;
  for (let g = 1; g <= G + 1; g++) starts[g] += starts[g - 1];
  const order = new Int32Array(n);
  for (let r = 0; r < n; r++) order[starts[f.grp[r] + 1]++] = r;

  const batches: { from: number; batch: EdgeBatch }[] = [];
  let from = 0;
  while (from < n) {
    let to = Math.min(n, from + SCHEDULE.poolChunk);
    while (to < n && f.grp[order[to]] >= 0 && f.grp[order[to]] === f.grp[order[to - 1]]) to++;
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
      b.kind[k] = f.kind[r];
      b.flags[k] = f.flags[r];
      b.pairK[k] = f.pk[r];
      b.verified[k] = f.verified[r];
      b.ageDays[k] = f.age[r];
      b.extOwners[k] = f.ext[r];
      b.group[k] = f.grp[r];
      b.t[k] = f.t[r];
    }
    batches.push({ from, batch: b });
    from = to;
  }
  return { order, batches };
}

/**
 * For each agent, the number of distinct owners among its (agent, owner) pairs: pairs bucketed by
 * agent (counting sort), then deduplicated with one marker per owner. Linear in the pairs, with
 * arrays indexed by agent and owner number instead of a set of a million pair keys.
 */
function countDistinctOwners(pairAgent: Int32Array, pairOwner: Int32Array, m: number, out: Int32Array): void {
  const agents = out.length;
  const start = new Int32Array(agents + 1);
  let maxOwner = 0;
  for (let i = 0; i < m; i++) {
    start[pairAgent[i] + 1]++;
    if (pairOwner[i] > maxOwner) maxOwner = pairOwner[i];
  }
  for (let a = 0; a < agents; a++) start[a + 1] += start[a];
  const fill = start.slice(0, agents);
  const owners = new Int32Array(m);
  for (let i = 0; i < m; i++) owners[fill[pairAgent[i]]++] = pairOwner[i];
  const seen = new Int32Array(maxOwner + 1).fill(-1);
  for (let a = 0; a < agents; a++) {
    for (let j = start[a]; j < start[a + 1]; j++) {
      const o = owners[j];
      if (seen[o] !== a) {
        seen[o] = a;
        out[a]++;
      }
    }
  }
}

function sumReputation(f: Facts, n: number, w: Float32Array, agents: number): ReputationSums {
  const s: ReputationSums = {
    up: new Float64Array(agents),
    down: new Float64Array(agents),
    rr: new Float64Array(agents),
    ra: new Float64Array(agents),
    fol: new Float64Array(agents),
    extOwners: new Int32Array(agents),
    counterparts: new Int32Array(agents),
  };
  // (agent, other owner) pairs: external upvoters of an agent; both sides of weighted conversations.
  const extA = new Int32Array(n);
  const extO = new Int32Array(n);
  let ne = 0;
  const convA = new Int32Array(2 * n);
  const convO = new Int32Array(2 * n);
  let nc = 0;
  for (let r = 0; r < n; r++) {
    const kind = f.kind[r];
    const t = f.tn[r];
    if (kind === 0) {
      if (f.value[r] === 1) {
        s.up[t] += w[r];
        if (w[r] > 0 && f.aon[r] !== f.ton[r]) {
          extA[ne] = t;
          extO[ne++] = f.aon[r];
        }
      } else if (f.value[r] === -1) s.down[t] += w[r];
    } else if (kind === 1) {
      s.rr[t] += w[r];
      s.ra[f.an[r]] += w[r];
      if (w[r] > 0 && f.aon[r] !== f.ton[r]) {
        convA[nc] = t;
        convO[nc++] = f.aon[r];
        convA[nc] = f.an[r];
        convO[nc++] = f.ton[r];
      }
    } else if (kind === 2) s.fol[t] += w[r];
  }
  countDistinctOwners(extA, extO, ne, s.extOwners);
  countDistinctOwners(convA, convO, nc, s.counterparts);
  return s;
}

/** PostgreSQL binary timestamptz: microseconds since 2000-01-01 UTC. */
const PG_EPOCH_MS = 946_684_800_000;

/** Weights as stored (real, rounded to 1e-6). */
function storedWeights(weights: Float32Array): Float32Array {
  const out = new Float32Array(weights.length);
  for (let r = 0; r < weights.length; r++) out[r] = Math.round(weights[r] * 1e6) / 1e6;
  return out;
}

/** Streams (id, weight, reasons, computed_at) rows to `target`. */
async function copyEdges(
  trx: Knex.Transaction,
  target: string,
  ids: Float64Array,
  rounded: Float32Array,
  masks: Int32Array,
  now: Date,
): Promise<void> {
  const encoded = new Map<number, Buffer>();
  const reasons = (r: number) => {
    let b = encoded.get(masks[r]);
    if (!b) encoded.set(masks[r], (b = encodeTextArray(maskToCodes(masks[r]))));
    return b;
  };
  const at = (now.getTime() - PG_EPOCH_MS) * 1000;
  await copyIn(trx, `${target} (interaction_id, weight, reasons, computed_at)`, ids.length, [
    { type: 'int8', values: ids },
    { type: 'float4', values: rounded },
    { type: 'bytes', values: reasons },
    { type: 'int8', values: new Float64Array(ids.length).fill(at) },
  ]);
}

export interface WeightOptions {
  /** Scoped mode: refresh the stored facts of every actor of the scored rows too (one-agent recompute). */
  freshActors?: boolean;
  /** The process's thread pool (deps.scoringPool); without one every batch is computed inline. */
  pool?: ScoringPool;
}

export interface WeightRun extends WeightRunResult {
  /** full mode: the reputation sums of every agent (indexed by sc_ag.n) */
  sums?: ReputationSums;
  /** scoped mode: agents whose reputation inputs may have changed (the targets and the authors of changed replies) */
  affected: string[] | null;
}

/**
 * Scores interactions and writes scoring_edges (and brigade flags) inside `trx`, which holds
 * the scoring lock. `targets` null: full recompute (the table is rewritten, and every agent's
 * reputation inputs are summed on the way). Otherwise the interactions received by `targets`.
 */
export async function recomputeWeights(
  trx: Knex.Transaction,
  now: Date,
  targets: string[] | null,
  opts: WeightOptions = {},
): Promise<WeightRun> {
  const t0 = Date.now();
  const ws = windowStart(now);
  const scoped = targets !== null;
  await tuneTempBuffers(trx);
  if (scoped) await tuneScoped(trx);
  await trx.raw('drop table if exists sc_ag, sc_r, sc_pc, sc_recip, sc_pk, sc_dup, sc_grp, sc_out');
  if (!scoped) {
    await trx.raw(AGENTS_FULL_SQL);
    await trx.raw('analyze sc_ag');
  }
  await trx.raw(stageSql(scoped), scoped ? { ws, now, targets } : { ws, now });
  await trx.raw('analyze sc_r');
  let agentFacts: number;
  if (scoped) {
    // Touched agents (and actors never seen before, or every actor when asked) get fresh facts.
    const ids = await trx.raw(
      `select array(
         select unnest(:targets::uuid[])
         union select distinct r.a from sc_r r ${opts.freshActors ? '' : 'where not exists (select 1 from scoring_agent_facts f where f.agent_id = r.a)'}
       ) ids`,
      { targets },
    );
    agentFacts = ids.rows[0].ids.length;
    await trx.raw(SCOPED_FACTS_SQL, { ws, now, ids: ids.rows[0].ids });
  } else {
    await trx.raw('truncate scoring_agent_facts');
    agentFacts = (await trx.raw(FULL_FACTS_SQL, { now })).rowCount;
    await trx.raw('analyze scoring_agent_facts');
  }
  // Every derived table is analyzed: without statistics the planner joins them to the million
  // staged rows by nested loops.
  await trx.raw(PAIRS_SQL);
  await trx.raw('analyze sc_pc');
  await trx.raw('create temp table sc_recip (a uuid, t uuid, kind int2) on commit drop');
  const recips = (await trx.raw(recipSql(scoped), { ws, now })).rowCount;
  if (recips > 0) {
    await trx.raw('analyze sc_recip');
    await trx.raw(RECIP_FLAG_SQL);
  }
  await trx.raw(PAIR_RANKS_SQL);
  await trx.raw('analyze sc_pk');
  await trx.raw(OWNER_DUP_SQL);
  await trx.raw('analyze sc_dup');
  await trx.raw(GROUPS_SQL);
  await trx.raw('analyze sc_grp');
  const { n, cols } = await copyOut(trx, FACTS_SELECT, FACT_COLUMNS);
  const t1 = Date.now();

  const weights = new Float32Array(n);
  const masks = new Int32Array(n);
  const { order, batches } = buildBatches(cols, n);
  await Promise.all(
    batches.map(async ({ from, batch }) => {
      const out = opts.pool ? await opts.pool.run(batch) : computeBatch(batch);
      for (let k = 0; k < out.weights.length; k++) {
        const r = order[from + k];
        weights[r] = out.weights[k];
        masks[r] = out.masks[k];
      }
    }),
  );
  const t2 = Date.now();

  const stored = storedWeights(weights);
  let rewritten = n;
  let affected: string[] | null = null;
  if (scoped) {
    await trx.raw('create temp table sc_out (like scoring_edges) on commit drop');
    await copyEdges(trx, 'sc_out', cols.id, stored, masks, now);
    // Only rows whose weight or reasons change are written; the authors of changed replies
    // (received by a scored target, authored by anyone) get their reputation recomputed too.
    const up = await trx.raw(`with up as (
        insert into scoring_edges as se select * from sc_out
        on conflict (interaction_id) do update set weight = excluded.weight, reasons = excluded.reasons, computed_at = excluded.computed_at
        where se.weight is distinct from excluded.weight or se.reasons is distinct from excluded.reasons
        returning interaction_id)
      select array(select distinct r.a from up join sc_r r on r.id = up.interaction_id where r.kind = 1) actors, (select count(*) from up)::int n`);
    rewritten = up.rows[0].n;
    affected = [...new Set([...targets, ...up.rows[0].actors])];
  } else {
    // Bulk load without the index, then build it once (the lock is exclusive since the truncate anyway).
    await trx.raw('truncate scoring_edges');
    await trx.raw('alter table scoring_edges drop constraint scoring_edges_pkey');
    await copyEdges(trx, 'scoring_edges', cols.id, stored, masks, now);
    await trx.raw('alter table scoring_edges add primary key (interaction_id)');
    // A rewritten table has no statistics yet: without them later joins plan nested loops.
    await trx.raw('analyze scoring_edges');
  }
  const brigade: number[] = [];
  for (let r = 0; r < n; r++) if (masks[r] & BIT.BRIGADE_PATTERN) brigade.push(cols.id[r]);
  const flags = await writeBrigadeFlags(trx, brigade, now);
  const t3 = Date.now();
  let sums: ReputationSums | undefined;
  if (!scoped) sums = sumReputation(cols, n, stored, (await trx.raw('select count(*)::int n from sc_ag')).rows[0].n);
  return {
    mode: scoped ? 'scoped' : 'full',
    sums,
    affected,
    rewritten,
    interactions: n,
    brigadeFlags: flags,
    agentFacts,
    ms: { facts: t1 - t0, compute: t2 - t1, write: t3 - t2 },
  };
}

/** One flag per (post or comment, direction) with brigaded votes; re-detection refreshes it. */
async function writeBrigadeFlags(trx: Db, ids: number[], now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await trx.raw(
    `insert into brigade_flags (post_id, comment_id, target_agent_id, direction, votes, first_vote_at, last_vote_at, flagged_at)
     select case when comment_id is null then post_id end, comment_id, (array_agg(t))[1], dir, count(*), min(ts), max(ts), :now
     from (select i.post_id, i.comment_id, i.target_agent_id t, case when i.value > 0 then 1 else -1 end dir, i.occurred_at ts
           from interactions i where i.id = any(:ids::bigint[])) x
     group by 1, 2, 4
     on conflict (post_id, comment_id, direction) do update set votes = excluded.votes,
       first_vote_at = excluded.first_vote_at, last_vote_at = excluded.last_vote_at, flagged_at = excluded.flagged_at`,
    { ids, now },
  );
  return r.rowCount;
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
