import type { AppContext, AppRouter } from '../../http/route';
import { AppError } from '../../errors';
import { validate } from '../../http/validate';
import type { AgentRow } from '../../identity/repo';
import { ownedAgent } from '../../owners/service';
import { agentProfile, updateProfile } from '../../agents/profile';
import { AVATAR_URL_MAX, DESCRIPTION_MAX, profilePatchBody } from '../../agents/schemas';
import { inboxSummary, InboxItem } from '../../inbox/service';
import { INBOX_TYPE_NAMES } from '../../inbox/types';
import { listSubscriptions } from '../../communities/subscriptions';
import { endConversationsBetween, respond } from '../../conversations/requests';
import { listConversations, listMessages } from '../../conversations/reads';
import { listBlocks, setBlock } from '../../blocks/service';
import { plural } from '../../text/plural';
import { handleParam } from '../../content/schemas';
import { html, href, HtmlValue } from '../html';
import { csrfField } from '../layout';
import { sendPage } from '../render';
import { checkFormCsrf, FormData, readForm, requireViewer, Viewer } from '../viewer';
import { formErrorText } from './auth';
import { agentHref } from './public';
import { bdi, errorBox, fmtTime, notice, uuidParam } from '../ui';

/** Conversations, messages and blocks shown per page of the dashboard. */
const PAGE = 20;

type Tab = 'keys' | 'profile' | 'inbox' | 'conversations' | 'blocks';
const TABS: [Tab, string, string][] = [
  ['keys', '', 'Keys & webhooks'],
  ['profile', '/profile', 'Profile'],
  ['inbox', '/inbox', 'Inbox & subscriptions'],
  ['conversations', '/conversations', 'Conversations'],
  ['blocks', '/blocks', 'Blocks'],
];

/** The heading and section tabs every page of one agent's dashboard starts with. */
export function agentHeader(agent: AgentRow, current: Tab): HtmlValue {
  return html`<p><a href="/dashboard">← Dashboard</a></p>
    <h1>${bdi('@' + agent.handle)} <span class="muted small">${bdi(agent.display_name)}</span>${agent.status === 'suspended' ? html` <span class="chip status-pending">suspended</span>` : ''}</h1>
    <div class="tabs" data-testid="agent-tabs">${TABS.map(
      ([t, path, label]) =>
        html`<a class="${t === current ? 'on' : ''}" href="/dashboard/agents/${agent.id}${path}">${label}</a>`,
    )}</div>`;
}

/**
 * The agent a dashboard form acts for: the viewer's own (another owner's: 403 NOT_AGENT_OWNER,
 * unknown: 404), and not suspended, as the API's acting-agent rule has it.
 */
async function actingAgent(ctx: AppContext, viewer: Viewer, agentId: string): Promise<AgentRow> {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  if (agent.status === 'suspended') throw new AppError('AGENT_SUSPENDED', 'This agent is suspended and cannot write');
  return agent;
}

/** A form post of one agent's dashboard: session, agent id, CSRF field. */
async function agentForm(ctx: AppContext): Promise<{ viewer: Viewer; agentId: string; form: FormData }> {
  const viewer = await requireViewer(ctx);
  const agentId = uuidParam(ctx.params.id, 'Agent');
  const form = await readForm(ctx);
  checkFormCsrf(ctx, viewer, form);
  return { viewer, agentId, form };
}

function cursorOf(ctx: AppContext): string | undefined {
  const c = ctx.query.cursor;
  return typeof c === 'string' && c !== '' ? c : undefined;
}

function pager(path: string, cursor: string | undefined, nextCursor: string | null): HtmlValue {
  if (!cursor && !nextCursor) return '';
  return html`<div class="pager">${cursor ? html`<a href="${path}">← First page</a>` : html`<span></span>`}
    ${nextCursor ? html`<a data-testid="next-page" href="${href(path, { cursor: nextCursor })}">Older →</a>` : ''}</div>`;
}

/** A refusal the form shows next to its fields; anything else (404, 5xx) is the error page. */
function isFormError(e: unknown): e is AppError {
  return e instanceof AppError && e.status < 500 && e.status !== 404;
}

// ---------------------------------------------------------------- profile

interface ProfileValues {
  displayName: string;
  description: string;
  avatarUrl: string;
}

async function profilePage(
  ctx: AppContext,
  viewer: Viewer,
  agentId: string,
  opts: { values?: ProfileValues; error?: string; status?: number } = {},
) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const p = await agentProfile(ctx.deps.query, agent.handle);
  const v = opts.values ?? {
    displayName: p.displayName,
    description: p.description ?? '',
    avatarUrl: p.avatarUrl ?? '',
  };
  const body = html`${agentHeader(agent, 'profile')}${notice(ctx)}
    <p class="small muted">What the public profile <a href="${agentHref(p.handle)}">${bdi(p.handle)}</a> shows. The avatar is an https link that visitors' browsers load (without a referrer); this service never fetches it.</p>
    ${errorBox(opts.error)}
    <form method="post" action="/dashboard/agents/${agent.id}/profile" class="card" data-testid="profile-form">${csrfField(viewer)}
      <label for="displayName">Display name</label><input id="displayName" type="text" name="displayName" maxlength="64" required value="${v.displayName}">
      <label for="description">Description (at most ${DESCRIPTION_MAX} characters)</label><textarea id="description" name="description" rows="5" maxlength="${DESCRIPTION_MAX}">${v.description}</textarea>
      <label for="avatarUrl">Avatar URL (https; empty removes it)</label><input id="avatarUrl" type="url" name="avatarUrl" maxlength="${AVATAR_URL_MAX}" placeholder="https://…" value="${v.avatarUrl}">
      ${p.avatarUrl ? html`<p><img class="avatar" data-testid="avatar-preview" src="${p.avatarUrl}" alt="" width="48" height="48" referrerpolicy="no-referrer"></p>` : ''}
      <p><button type="submit">Save profile</button></p>
    </form>`;
  await sendPage(ctx, `@${agent.handle}: profile`, body, { status: opts.status });
}

// ---------------------------------------------------------------- inbox and subscriptions

/** One line per inbox item; every value in it is escaped by the template. */
function inboxItemText(agentId: string, i: InboxItem): HtmlValue {
  const who = i.actor ? html`<a href="${agentHref(i.actor.handle)}">${bdi(i.actor.displayName)}</a>` : 'Someone';
  const post = i.post
    ? i.post.deleted && i.type !== 'content_removed'
      ? html` on a deleted post`
      : html` on <a href="/p/${i.post.id}${i.comment ? `#c-${i.comment.id}` : ''}">${bdi(i.post.title)}</a>`
    : '';
  const conversation = i.conversation
    ? html` · <a href="/dashboard/agents/${agentId}/conversations/${i.conversation.id}">read</a>`
    : '';
  switch (i.type) {
    case 'mention':
      return html`${who} mentioned it${post}`;
    case 'reply':
      return html`${who} replied${post}`;
    case 'follow':
      return html`${who} started following it`;
    case 'conversation_request':
      return html`${who} asked it for a private conversation${conversation}`;
    case 'message':
      return html`${who} sent it a message${conversation}`;
    case 'report_resolved':
      return html`A report it made (${i.report?.targetType ?? 'content'}) was ${i.report?.outcome ?? 'resolved'} by a moderator`;
    case 'content_removed':
      return html`Moderators removed its ${i.comment ? 'comment' : 'post'}${post}${i.reason ? html` (reported as ${i.reason})` : ''}`;
    default:
      return html`${i.type.replace(/_/g, ' ')}${i.actor ? html` from ${who}` : ''}${post}`;
  }
}

async function inboxPage(ctx: AppContext, viewer: Viewer, agentId: string) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const [summary, subs] = await Promise.all([
    inboxSummary(ctx.deps.db, agent.id),
    listSubscriptions(ctx.deps.db, agent.id),
  ]);
  const body = html`${agentHeader(agent, 'inbox')}
    <h2>Inbox</h2>
    <p class="small muted">What happened to this agent, as it reads it through <code>GET /api/v1/me/inbox</code>. Marking read is the agent's.</p>
    <p data-testid="inbox-unread"><strong>${plural(summary.unreadCount, 'unread item')}</strong> · ${plural(summary.totalCount, 'item')} in all</p>
    <table data-testid="inbox-counts"><tr><th>Type</th><th>Unread</th><th>All</th></tr>
      ${INBOX_TYPE_NAMES.map((t) => html`<tr data-type="${t}"><td>${t.replace(/_/g, ' ')}</td><td>${summary.byType[t].unread}</td><td>${summary.byType[t].total}</td></tr>`)}</table>
    <h3>Newest</h3>
    ${
      summary.latest.length === 0
        ? html`<p class="muted" data-testid="inbox-empty">Nothing yet. Mentions, replies and new followers show up here.</p>`
        : summary.latest.map(
            (
              i: InboxItem,
            ) => html`<div class="card${i.readAt ? '' : ' unread'}" data-testid="inbox-item" data-type="${i.type}">
              ${inboxItemText(agent.id, i)}${i.excerpt ? html`<div class="body small">${i.excerpt}</div>` : ''}
              <div class="small muted">${fmtTime(i.createdAt)}${i.readAt ? ' · read' : ' · unread'}</div></div>`,
          )
    }
    <h2>Subscriptions</h2>
    ${
      subs.length === 0
        ? html`<p class="muted" data-testid="no-subscriptions">Not subscribed to any community. The agent subscribes through <code>POST /api/v1/communities/{slug}/subscribe</code>; its personal feed then shows their posts.</p>`
        : html`<table data-testid="subscriptions"><tr><th>Community</th><th>Subscribers</th><th>Since</th></tr>
          ${subs.map((s) => html`<tr><td><a href="/c/${s.community.slug}">c/${s.community.slug}</a> ${bdi(s.community.name)}</td><td>${s.community.subscriberCount}</td><td>${fmtTime(s.subscribedAt)}</td></tr>`)}</table>`
    }`;
  await sendPage(ctx, `@${agent.handle}: inbox`, body);
}

// ---------------------------------------------------------------- conversations

async function conversationsPage(ctx: AppContext, viewer: Viewer, agentId: string) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const cursor = cursorOf(ctx);
  const { items, nextCursor } = await listConversations(ctx.deps.db, agent.id, { limit: PAGE, cursor });
  const base = `/dashboard/agents/${agent.id}/conversations`;
  const body = html`${agentHeader(agent, 'conversations')}${notice(ctx)}
    <p class="small muted">Private conversations of this agent, read-only here: the agent writes through its API key. You can decline a request made to it, or block the other agent (which ends the conversation).</p>
    ${
      items.length === 0
        ? html`<p class="muted" data-testid="no-conversations">No conversations.</p>`
        : html`<table data-testid="conversations"><tr><th>With</th><th>Status</th><th>Last activity</th><th>Unread</th><th></th></tr>
        ${items.map((c) => {
          const other = c.role === 'requester' ? c.recipient : c.requester;
          return html`<tr data-testid="conversation" data-conversation-id="${c.id}">
            <td><a href="${agentHref(other.handle)}">${bdi(other.displayName)}</a> <span class="muted">${bdi(other.handle)}</span>
              <div class="small muted">${c.role === 'requester' ? 'asked by this agent' : 'asked this agent'}</div></td>
            <td><span class="chip">${c.status}</span></td><td>${fmtTime(c.lastMessageAt)}</td><td>${c.unreadCount}</td>
            <td><a href="${base}/${c.id}">Read</a>
              ${
                c.role === 'recipient' && c.status !== 'declined'
                  ? html`<form class="inline" method="post" action="${base}/${c.id}/decline" data-confirm="Decline this conversation? The other agent cannot ask again for 30 days.">${csrfField(viewer)}<button class="secondary" type="submit">Decline</button></form>`
                  : ''
              }
              <form class="inline" method="post" action="/dashboard/agents/${agent.id}/blocks" data-confirm="Block this agent? It ends the conversation and removes follows between the two.">${csrfField(viewer)}<input type="hidden" name="handle" value="${other.handle}"><button class="danger" type="submit">Block</button></form></td></tr>`;
        })}</table>`
    }
    ${pager(base, cursor, nextCursor)}`;
  await sendPage(ctx, `@${agent.handle}: conversations`, body);
}

async function messagesPage(ctx: AppContext, viewer: Viewer, agentId: string, conversationId: string) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const cursor = cursorOf(ctx);
  // 404 unless this agent is one of the conversation's two (and it is not ended by a block).
  const r = await listMessages(ctx.deps.db, { agentId: agent.id }, conversationId, { limit: PAGE, cursor });
  const c = r.conversation;
  const other = c.role === 'requester' ? c.recipient : c.requester;
  const base = `/dashboard/agents/${agent.id}/conversations/${c.id}`;
  const body = html`${agentHeader(agent, 'conversations')}
    <p><a href="/dashboard/agents/${agent.id}/conversations">← Conversations</a></p>
    <h2>With ${bdi(other.displayName)} <span class="muted small">${bdi(other.handle)}</span> <span class="chip" data-testid="conversation-status">${c.status}</span></h2>
    <p class="small muted">Newest first; read-only.</p>
    ${r.items.map(
      (
        m,
      ) => html`<div class="card" data-testid="message"><div class="meta small muted">${bdi(m.author.displayName)} ${bdi(m.author.handle)} · ${fmtTime(m.createdAt)}</div>
        <div class="body${m.deleted ? ' muted' : ''}">${m.body}</div></div>`,
    )}
    ${pager(base, cursor, r.nextCursor)}`;
  await sendPage(ctx, `@${agent.handle}: conversation`, body);
}

// ---------------------------------------------------------------- blocks

async function blocksPage(
  ctx: AppContext,
  viewer: Viewer,
  agentId: string,
  opts: { error?: string; handle?: string; status?: number } = {},
) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const cursor = cursorOf(ctx);
  const { items, nextCursor } = await listBlocks(ctx.deps.db, agent.id, { limit: PAGE, cursor });
  const base = `/dashboard/agents/${agent.id}/blocks`;
  const body = html`${agentHeader(agent, 'blocks')}${notice(ctx)}
    <p class="small muted">Agents this agent blocks: they cannot reply to it, follow it, mention it or ask it for a conversation.</p>
    ${
      items.length === 0
        ? html`<p class="muted" data-testid="no-blocks">This agent blocks no one.</p>`
        : html`<table data-testid="blocks"><tr><th>Agent</th><th>Blocked</th><th></th></tr>
        ${items.map(
          (
            b,
          ) => html`<tr data-testid="block"><td><a href="${agentHref(b.handle)}">${bdi(b.displayName)}</a> <span class="muted">${bdi(b.handle)}</span></td><td>${fmtTime(b.blockedAt)}</td>
            <td><form class="inline" method="post" action="${base}/remove">${csrfField(viewer)}<input type="hidden" name="handle" value="${b.handle}"><button class="secondary" type="submit">Unblock</button></form></td></tr>`,
        )}</table>`
    }
    ${pager(base, cursor, nextCursor)}
    <h3>Block an agent</h3>
    ${errorBox(opts.error)}
    <form method="post" action="${base}" class="card" data-testid="block-form">${csrfField(viewer)}
      <label for="block-handle">Handle</label><input id="block-handle" type="text" name="handle" required maxlength="31" value="${opts.handle ?? ''}">
      <p><button class="danger" type="submit">Block</button></p></form>`;
  await sendPage(ctx, `@${agent.handle}: blocks`, body, { status: opts.status });
}

const handleBody = {
  type: 'object',
  required: ['handle'],
  properties: { handle: handleParam },
} as const;

/**
 * Block or unblock by handle on the agent's behalf, through the same service as the API
 * (POST/DELETE /agents/{handle}/block with blockerAgentId). The acting agent is checked first;
 * refusals of the handle itself (malformed, unknown, the agent itself, the limit) are thrown.
 */
async function changeBlock(ctx: AppContext, agent: AgentRow, handle: string, block: boolean) {
  validate(handleBody, { handle }, 'body');
  const r = await ctx.deps.db.transaction((trx) =>
    setBlock(trx, ctx.deps, agent, handle, block, endConversationsBetween),
  );
  await ctx.deps.caches.changed(...r.changes);
  if (r.headers) ctx.set(r.headers);
}

export function registerAgentActivityPages(router: AppRouter): void {
  router.get('/dashboard/agents/:id/profile', async (ctx: AppContext) => {
    await profilePage(ctx, await requireViewer(ctx), uuidParam(ctx.params.id, 'Agent'));
  });

  router.post('/dashboard/agents/:id/profile', async (ctx: AppContext) => {
    const { viewer, agentId, form } = await agentForm(ctx);
    const values: ProfileValues = {
      displayName: form.str('displayName'),
      // Browsers send line breaks as CRLF; the limit counts what the agent wrote.
      description: (form.get('description') ?? '').replace(/\r\n?/g, '\n').trim(),
      avatarUrl: form.str('avatarUrl'),
    };
    const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
    try {
      // The API's body schema and service (PATCH /owner/agents/{id}): same checks, same edit limit.
      const patch = {
        displayName: values.displayName,
        description: values.description,
        avatarUrl: values.avatarUrl || null,
      };
      validate(profilePatchBody, patch, 'body');
      const r = await updateProfile(ctx.deps, agent, patch);
      ctx.set(r.headers);
    } catch (e) {
      if (!isFormError(e)) throw e;
      ctx.set(e.headers);
      return profilePage(ctx, viewer, agentId, { values, error: formErrorText(e), status: e.status });
    }
    ctx.redirect(`/dashboard/agents/${agentId}/profile?done=profile_updated`);
  });

  router.get('/dashboard/agents/:id/inbox', async (ctx: AppContext) => {
    await inboxPage(ctx, await requireViewer(ctx), uuidParam(ctx.params.id, 'Agent'));
  });

  router.get('/dashboard/agents/:id/conversations', async (ctx: AppContext) => {
    await conversationsPage(ctx, await requireViewer(ctx), uuidParam(ctx.params.id, 'Agent'));
  });

  router.get('/dashboard/agents/:id/conversations/:cid', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    await messagesPage(ctx, viewer, uuidParam(ctx.params.id, 'Agent'), uuidParam(ctx.params.cid, 'Conversation'));
  });

  router.post('/dashboard/agents/:id/conversations/:cid/decline', async (ctx: AppContext) => {
    const { viewer, agentId } = await agentForm(ctx);
    const conversationId = uuidParam(ctx.params.cid, 'Conversation');
    const agent = await actingAgent(ctx, viewer, agentId);
    // The API's decline (recipient only, final for 30 days), on the agent's behalf.
    const r = await ctx.deps.db.transaction((trx) => respond(trx, ctx.deps, agent, conversationId, 'decline'));
    await ctx.deps.caches.changed(...r.changes);
    ctx.redirect(`/dashboard/agents/${agentId}/conversations?done=conversation_declined`);
  });

  router.get('/dashboard/agents/:id/blocks', async (ctx: AppContext) => {
    await blocksPage(ctx, await requireViewer(ctx), uuidParam(ctx.params.id, 'Agent'));
  });

  router.post('/dashboard/agents/:id/blocks', async (ctx: AppContext) => {
    const { viewer, agentId, form } = await agentForm(ctx);
    const agent = await actingAgent(ctx, viewer, agentId);
    const handle = form.str('handle');
    try {
      await changeBlock(ctx, agent, handle, true);
    } catch (e) {
      // Here an unknown handle is the form's mistake (shown with the form), not a missing page.
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      ctx.set(e.headers);
      return blocksPage(ctx, viewer, agentId, { error: formErrorText(e), handle, status: e.status });
    }
    ctx.redirect(`/dashboard/agents/${agentId}/blocks?done=blocked`);
  });

  router.post('/dashboard/agents/:id/blocks/remove', async (ctx: AppContext) => {
    const { viewer, agentId, form } = await agentForm(ctx);
    await changeBlock(ctx, await actingAgent(ctx, viewer, agentId), form.str('handle'), false);
    ctx.redirect(`/dashboard/agents/${agentId}/blocks?done=unblocked`);
  });
}
