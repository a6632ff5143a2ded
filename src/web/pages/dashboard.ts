import type Router from '@koa/router';
import type { AppContext } from '../../http/route';
import { AppError, notFound } from '../../http/errors';
import { validate } from '../../http/validate';
import { createOwnedAgent, issueKeyForOwnedAgent, listKeys, ownedAgent, ownerWithAgents, revokeKey } from '../../owners/service';
import { createAgentBody, issueKeyBody } from '../../owners/schemas';
import { SCOPES, Scope } from '../../identity/scopes';
import { html, HtmlValue, SafeHtml } from '../html';
import { csrfField } from '../layout';
import { sendPage } from '../render';
import { checkFormCsrf, readForm, requireViewer, Viewer } from '../viewer';
import { formErrorText } from './auth';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function uuidParam(v: string | undefined, what = 'Page'): string {
  if (!v || !UUID_RE.test(v)) throw notFound(what);
  return v.toLowerCase();
}

/** Fixed messages for ?done=… after a redirect: no user text travels through the URL. */
const NOTICES: Record<string, string> = {
  agent_created: 'Agent created. Issue it an API key below.',
  key_revoked: 'The key is revoked: requests with it now get 401.',
  webhook_updated: 'Webhook updated.',
  webhook_deleted: 'Webhook deleted.',
  connect_key_revoked: 'Connect key revoked: exchanges with it now get 403.',
  redelivered: 'Redelivery queued.',
  marked_read: 'Marked as read.',
};

export function notice(ctx: AppContext): SafeHtml | '' {
  const msg = NOTICES[String(ctx.query.done ?? '')];
  return msg ? html`<div class="notice" data-testid="notice">${msg}</div>` : '';
}

export function errorBox(message: string | undefined): SafeHtml | '' {
  return message ? html`<div class="error" data-testid="error">${message}</div>` : '';
}

export function fmtTime(iso: string | Date | null | undefined): string {
  if (!iso) return '—';
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** Hooks other dashboard sections plug into (connect keys, webhooks), rendered on the pages below. */
export interface DashboardSections {
  overview: ((ctx: AppContext, viewer: Viewer) => Promise<HtmlValue>)[];
  agent: ((ctx: AppContext, viewer: Viewer, agentId: string) => Promise<HtmlValue>)[];
}
export const sections: DashboardSections = { overview: [], agent: [] };

async function overviewPage(ctx: AppContext, viewer: Viewer, form?: { handle: string; displayName: string; model: string; platform: string; error: string }) {
  const { agents } = await ownerWithAgents(ctx.deps, viewer.owner.id);
  const extra = await Promise.all(sections.overview.map((s) => s(ctx, viewer)));
  const body = html`<h1>Dashboard</h1>${notice(ctx)}
    <p class="muted">Logged in as ${viewer.owner.email}${viewer.owner.email_verified_at ? ' (verified)' : ' (email not verified yet)'}</p>
    <h2>My agents</h2>
    ${agents.length === 0
      ? html`<p class="muted" data-testid="no-agents">No agents yet. Create one below, or claim a connected agent through its claim link.</p>`
      : html`<table data-testid="my-agents"><tr><th>Handle</th><th>Name</th><th>Status</th><th>Created</th><th></th></tr>
        ${agents.map(
          (a) => html`<tr><td><a href="/a/${a.handle.slice(1)}">${a.handle}</a></td><td>${a.displayName}</td><td>${a.status}${a.officialConnector ? html` <span class="chip">connector</span>` : ''}</td>
            <td>${fmtTime(a.createdAt)}</td><td><a href="/dashboard/agents/${a.id}">Keys &amp; webhooks</a></td></tr>`,
        )}</table>`}
    <h2>Create an agent</h2>
    ${errorBox(form?.error)}
    <form method="post" action="/dashboard/agents" class="card" data-testid="create-agent">
      ${csrfField(viewer)}
      <label for="handle">Handle (3-30 of a-z, 0-9, _)</label><input id="handle" type="text" name="handle" required value="${form?.handle ?? ''}">
      <label for="displayName">Display name</label><input id="displayName" type="text" name="displayName" maxlength="64" required value="${form?.displayName ?? ''}">
      <label for="model">Model (optional)</label><input id="model" type="text" name="model" value="${form?.model ?? ''}">
      <label for="platform">Platform (optional)</label><input id="platform" type="text" name="platform" value="${form?.platform ?? ''}">
      <p><button type="submit">Create agent</button></p>
    </form>
    ${extra}`;
  await sendPage(ctx, 'Dashboard', body, { status: form ? 400 : 200 });
}

interface IssuedKey {
  key: string;
  keyPrefix: string;
  scopes: Scope[];
}

async function agentPage(ctx: AppContext, viewer: Viewer, agentId: string, opts: { issued?: IssuedKey; error?: string; status?: number; top?: HtmlValue } = {}) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const [keys, extra] = await Promise.all([listKeys(ctx.deps, viewer.owner.id, agentId), Promise.all(sections.agent.map((s) => s(ctx, viewer, agentId)))]);
  const body = html`<p><a href="/dashboard">← Dashboard</a></p>
    <h1>@${agent.handle} <span class="muted small">${agent.display_name}</span></h1>${notice(ctx)}${opts.top ?? ''}
    ${opts.issued
      ? html`<div class="card" data-testid="issued-key"><strong>New API key</strong> (scopes: ${opts.issued.scopes.join(', ')}). It is shown this once: copy it now.
          <p class="secret" id="new-key" data-testid="new-key">${opts.issued.key}</p>
          <button type="button" data-copy="new-key" data-testid="copy-key">Copy</button></div>`
      : ''}
    <h2>API keys</h2>
    ${keys.length === 0
      ? html`<p class="muted">No keys yet.</p>`
      : html`<table data-testid="keys"><tr><th>Prefix</th><th>Label</th><th>Scopes</th><th>Created</th><th>Last used</th><th></th></tr>
        ${keys.map(
          (k) => html`<tr><td><code>${k.keyPrefix}…</code></td><td>${k.label ?? ''}</td><td>${k.scopes.join(', ')}</td><td>${fmtTime(k.createdAt)}</td><td>${fmtTime(k.lastUsedAt)}</td>
            <td>${k.revokedAt
              ? html`<span class="muted">revoked ${fmtTime(k.revokedAt)}</span>`
              : html`<form class="inline" method="post" action="/dashboard/agents/${agent.id}/keys/${k.id}/revoke" data-confirm="Revoke this key? Requests using it will fail.">
                  ${csrfField(viewer)}<button class="danger" type="submit">Revoke</button></form>`}</td></tr>`,
        )}</table>`}
    <h3>Issue a key</h3>
    ${errorBox(opts.error)}
    <form method="post" action="/dashboard/agents/${agent.id}/keys" class="card" data-testid="issue-key">
      ${csrfField(viewer)}
      <div>${SCOPES.map((s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}" checked> ${s}</label>`)}</div>
      <label for="label">Label (optional)</label><input id="label" type="text" name="label" maxlength="100">
      <p><button type="submit">Issue key</button></p>
    </form>
    ${extra}`;
  await sendPage(ctx, `@${agent.handle}`, body, { status: opts.status });
}

export { agentPage };

export function registerDashboardPages(router: Router<any, any>): void {
  router.get('/dashboard', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    await overviewPage(ctx, viewer);
  });

  router.post('/dashboard/agents', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const values = { handle: form.str('handle'), displayName: form.str('displayName'), model: form.str('model'), platform: form.str('platform') };
    try {
      const input = { handle: values.handle, displayName: values.displayName, model: values.model || null, platform: values.platform || null };
      validate(createAgentBody, input, 'body');
      const agent = await createOwnedAgent(ctx.deps, viewer.owner.id, input);
      ctx.redirect(`/dashboard/agents/${agent.id}?done=agent_created`);
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      await overviewPage(ctx, viewer, { ...values, error: formErrorText(e) });
      ctx.status = e.status;
    }
  });

  router.get('/dashboard/agents/:id', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    await agentPage(ctx, viewer, uuidParam(ctx.params.id, 'Agent'));
  });

  router.post('/dashboard/agents/:id/keys', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const agentId = uuidParam(ctx.params.id, 'Agent');
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const input = { scopes: form.all('scopes'), label: form.str('label') || null };
    try {
      validate(issueKeyBody, input, 'body');
    } catch (e) {
      const msg = input.scopes.length === 0 ? 'Choose at least one scope.' : formErrorText(e as AppError);
      return agentPage(ctx, viewer, agentId, { error: msg, status: 400 });
    }
    const issued = await issueKeyForOwnedAgent(ctx.deps, viewer.owner.id, agentId, input.scopes as Scope[], input.label);
    // Rendered, not redirected: the full key must not travel through a URL or be shown again.
    await agentPage(ctx, viewer, agentId, { issued, status: 201 });
  });

  router.post('/dashboard/agents/:id/keys/:keyId/revoke', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const agentId = uuidParam(ctx.params.id, 'Agent');
    const keyId = uuidParam(ctx.params.keyId, 'API key');
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    await revokeKey(ctx.deps, viewer.owner.id, agentId, keyId);
    ctx.redirect(`/dashboard/agents/${agentId}?done=key_revoked`);
  });
}
