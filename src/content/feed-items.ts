import { REACTION_TYPES } from './reaction-types';

/**
 * The parts of feed items that votes, reactions and comments do not change, kept per process
 * (`deps.caches.feedItems`) under (post id, `posts.item_version`): every write of those parts (an
 * edit, an author's new handle or display name, a community's new slug or name) bumps the version
 * in its own transaction (sql/113), and the feed's query reads the version with each page's
 * counters, so an entry is used only for the version the page's own query returned. Nothing is
 * ever invalidated or announced: an entry of an older version is simply not used, and replaced.
 */
export interface FeedItemParts {
  version: number;
  id: string;
  title: string;
  excerpt: string;
  tags: string[];
  author: { id: string; handle: string; displayName: string };
  community: { slug: string; name: string };
  createdAt: Date;
  editedAt: Date | null;
  /** The item's JSON up to its counters: `{"id":...,"tags":[...],`. */
  head: string;
  /** The item's JSON from after its reactions: `,"author":{...},...,"editedAt":...}`. */
  tail: string;
}

/** A row of the statement that reads the parts (feed.ts). */
export interface FeedItemPartsRow {
  id: string;
  item_version: number;
  title: string;
  excerpt: string;
  tags: string[];
  created_at: Date;
  edited_at: Date | null;
  author_id: string;
  handle: string;
  display_name: string;
  community_slug: string;
  community_name: string;
}

/** The counters of an item, as the whole page's statement reads them (feed.ts, wholeFeedPage). */
export interface FeedItemCounters {
  score: number;
  upvotes: number;
  downvotes: number;
  comments_count: number;
  [reactionCount: `${string}_count`]: number;
}

export function toItemParts(r: FeedItemPartsRow): FeedItemParts {
  const fixed = { id: r.id, title: r.title, excerpt: r.excerpt, tags: r.tags };
  const author = { id: r.author_id, handle: '@' + r.handle, displayName: r.display_name };
  const community = { slug: r.community_slug, name: r.community_name };
  const after = { author, community, createdAt: r.created_at, editedAt: r.edited_at };
  return {
    version: r.item_version,
    ...fixed,
    author,
    community,
    createdAt: r.created_at,
    editedAt: r.edited_at,
    head: JSON.stringify(fixed).slice(0, -1) + ',',
    tail: ',' + JSON.stringify(after).slice(1),
  };
}

/**
 * The counters of the post `p` as its item's JSON writes them, by PostgreSQL (src/db/json-sql.ts),
 * `"score":1,"upvotes":1,"downvotes":0,"commentsCount":2,"reactions":{"love":0,...}`: one text
 * column for the web process instead of nine integers to describe, parse and write again (the
 * columns are integers, not null, whose text is JSON's).
 */
export function countersJsonSql(p: string): string {
  // One format() call: a chain of || concatenations cost PostgreSQL more per row.
  const reactions = REACTION_TYPES.map((t) => `"${t}":%s`).join(',');
  const columns = ['score', 'upvotes', 'downvotes', 'comments_count', ...REACTION_TYPES.map((t) => `${t}_count`)];
  return `format('"score":%s,"upvotes":%s,"downvotes":%s,"commentsCount":%s,"reactions":{${reactions}}', ${columns
    .map((c) => `${p}.${c}`)
    .join(', ')})`;
}

/** An item's counters from their JSON (countersJsonSql), as the item object holds them. */
export function parseCounters(json: string): {
  score: number;
  upvotes: number;
  downvotes: number;
  commentsCount: number;
  reactions: Record<string, number>;
} {
  return JSON.parse(`{${json}}`);
}

/**
 * An item's JSON from its parts and its counters' JSON (countersJsonSql): byte for byte what
 * JSON.stringify writes for the item object (feedPage), fields in the same order.
 */
export function itemJson(p: FeedItemParts, countersJson: string): string {
  return p.head + countersJson + p.tail;
}

/** Entries kept (about 1 KB each: the excerpt is at most 280 characters). */
const MAX_ENTRIES = 10_000;

/**
 * Bounded map of FeedItemParts by post id. Past the bound, the oldest entry goes first unless it
 * was used since it was stored or last passed over: then it is kept as the newest, and the next
 * is looked at (second chance, an approximation of least recently used). A hit only marks its
 * entry, where moving it to the end on every hit cost two map updates per item of every page.
 */
export class FeedItemCache {
  private readonly entries = new Map<string, { parts: FeedItemParts; used: boolean }>();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  /** The parts of `id` at exactly `version`, or undefined. */
  get(id: string, version: number): FeedItemParts | undefined {
    const e = this.entries.get(id);
    if (e === undefined || e.parts.version !== version) return undefined;
    e.used = true;
    return e.parts;
  }

  set(p: FeedItemParts): void {
    this.entries.delete(p.id);
    // Room is made before the new entry goes in, so that it is never the one passed over last.
    while (this.entries.size >= this.maxEntries) {
      const [id, oldest] = this.entries.entries().next().value as [string, { parts: FeedItemParts; used: boolean }];
      this.entries.delete(id);
      if (oldest.used) this.entries.set(id, { parts: oldest.parts, used: false });
    }
    this.entries.set(p.id, { parts: p, used: false });
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}
