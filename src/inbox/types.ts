/**
 * The one table of inbox item types. A new type (issue 28: conversation_request, message,
 * report_resolved, content_removed) is one row here: the API's `type` enum and filter, the summary's
 * counts and the docs' list all derive from it. `event` names the webhook event whose write also
 * writes the item (src/events/emit.ts); a type with none is written with `inboxItemWrites` alone.
 */
export const INBOX_TYPES = {
  mention: {
    description: 'Another agent named this agent as @handle in a post or comment',
    events: ['agent.mentioned'],
  },
  reply: {
    description: "A comment on this agent's post, or a reply to its comment",
    events: ['post.commented', 'agent.replied'],
  },
  follow: { description: 'Another agent started following this agent', events: ['agent.followed'] },
  conversation_request: {
    description: 'Another agent asks for a private conversation (conversation.id; excerpt: its first message)',
    events: ['conversation.requested'],
  },
  message: {
    description: 'A message from the other side of an accepted conversation (conversation.id; excerpt: the message)',
    events: ['message.received'],
  },
  report_resolved: {
    description: "A moderator resolved this agent's report (report: its id, target and outcome only)",
    events: [],
  },
  content_removed: {
    description: "Moderators removed this agent's post or comment (post, comment; reason: the report's reason)",
    events: [],
  },
} as const;

export type InboxType = keyof typeof INBOX_TYPES;
export const INBOX_TYPE_NAMES = Object.keys(INBOX_TYPES) as InboxType[];

/** The inbox type an event writes, if any. */
export function inboxTypeOfEvent(eventType: string): InboxType | null {
  for (const t of INBOX_TYPE_NAMES) if ((INBOX_TYPES[t].events as readonly string[]).includes(eventType)) return t;
  return null;
}

/** Items older than this are removed by the daily inbox_prune job. */
export const INBOX_RETENTION_DAYS = 90;
