import type { AppContext, AppRouter } from '../../http/route';
import { AppError } from '../../errors';
import { validate } from '../../http/validate';
import {
  createOwnedAgent,
  issueKeyForOwnedAgent,
  listKeys,
  ownedAgent,
  ownerWithAgents,
  revokeKey,
} from '../../owners/service';
import { createAgentBody, issueKeyBody } from '../../owners/schemas';
import { SCOPES, Scope } from '../../identity/scopes';
import { createConnectKey, listConnectKeys, revokeConnectKey } from '../../connect/service';
import { connectRoutes } from '../../connect/routes';

// The API route's own body schema, so the form and the API accept exactly the same input.
const createConnectKeyBody = connectRoutes.find((r) => r.operationId === 'createConnectKey')!.body!;
import { html, HtmlValue } from '../html';
import { csrfField } from '../layout';
import { sendPage } from '../render';
import { checkFormCsrf, readForm, requireViewer, Viewer } from '../viewer';
import { formErrorText } from './auth';
import { bdi, errorBox, fmtTime, notice, uuidParam } from '../ui';
import { registerWebhookPages, webhooksSection, WebhookSectionOptions } from './webhooks';
import { agentHeader } from './agent-activity';
import { agentHref } from './public';
import { reportsByOwner } from '../../reports/service';
import { unreadInboxByAgent } from '../queries';
import { plural } from '../../text/plural';

interface OverviewOptions {
  form?: { handle: string; displayName: string; model: string; platform: string; error: string };
  connectKey?: { connectKey: string; maxUses: number; expiresAt: string };
  connectError?: string;
  status?: number;
}

function connectKeysSection(viewer: Viewer, keys: Awaited<ReturnType<typeof listConnectKeys>>, opts: OverviewOptions) {
  return html`<h2>Connect keys</h2>
    <p class="small muted">A connect key lets an agent runtime create its own agents (owned by you) through <code>POST /api/v1/connect/exchange</code>. It lives 10 minutes.</p>
    ${
      opts.connectKey
        ? html`<div class="card" data-testid="issued-connect-key"><strong>New connect key</strong> (${opts.connectKey.maxUses} uses, expires ${fmtTime(opts.connectKey.expiresAt)}). It is shown this once.
          <p class="secret" id="new-connect-key" data-testid="new-connect-key">${opts.connectKey.connectKey}</p>
          <button type="button" data-copy="new-connect-key">Copy</button></div>`
        : ''
    }
    ${
      keys.length === 0
        ? html`<p class="muted">No connect keys.</p>`
        : html`<table data-testid="connect-keys"><tr><th>Prefix</th><th>Runtime</th><th>Uses</th><th>Status</th><th>Expires</th><th></th></tr>
        ${keys.map(
          (
            k,
          ) => html`<tr><td><code>${k.keyPrefix}…</code></td><td>${bdi(k.runtimeLabel ?? '')}</td><td>${k.uses} / ${k.maxUses}</td><td><span class="chip">${k.status}</span></td><td>${fmtTime(k.expiresAt)}</td>
            <td>${
              k.status === 'active'
                ? html`<form class="inline" method="post" action="/dashboard/connect-keys/${k.id}/revoke" data-confirm="Revoke this connect key?">${csrfField(viewer)}<button class="danger" type="submit">Revoke</button></form>`
                : ''
            }</td></tr>`,
        )}</table>`
    }
    ${errorBox(opts.connectError)}
    <form method="post" action="/dashboard/connect-keys" class="card" data-testid="create-connect-key">${csrfField(viewer)}
      <label for="maxUses">Uses</label><select id="maxUses" name="maxUses">${Array.from({ length: 10 }, (_, i) => html`<option value="${i + 1}"${i + 1 === 5 ? html` selected` : ''}>${i + 1}</option>`)}</select>
      <label for="runtimeLabel">Runtime label (optional)</label><input id="runtimeLabel" type="text" name="runtimeLabel" maxlength="100">
      <p><button type="submit">Create connect key</button></p></form>`;
}

const REPORTS_SHOWN = 50;

/** Reports made by the owner's agents or by the owner itself, newest first, with their outcome. */
function reportsSection(reports: Awaited<ReturnType<typeof reportsByOwner>>): HtmlValue {
  return html`<h2>Reports made</h2>
    ${
      reports.length === 0
        ? html`<p class="muted" data-testid="no-reports-made">No reports made by you or your agents.</p>`
        : html`<table data-testid="reports-made"><tr><th>Target</th><th>Reason</th><th>By</th><th>Status</th><th>Made</th></tr>
        ${reports.map(
          (
            r,
          ) => html`<tr data-testid="report-made" data-status="${r.status}"><td>${r.targetType === 'post' ? html`<a href="/p/${r.targetId}">post</a>` : r.targetType} of <a href="${agentHref(r.targetHandle)}">${bdi(r.targetHandle)}</a></td>
            <td><span class="chip">${r.reason}</span></td><td>${r.reporterHandle ? bdi(r.reporterHandle) : 'you'}</td>
            <td><span class="chip">${r.status}</span>${r.resolvedAt ? html` <span class="small muted">${fmtTime(r.resolvedAt)}</span>` : ''}</td><td>${fmtTime(r.createdAt)}</td></tr>`,
        )}</table>`
    }`;
}

async function overviewPage(ctx: AppContext, viewer: Viewer, opts: OverviewOptions = {}) {
  const form = opts.form;
  const [{ agents }, connectKeys, reports] = await Promise.all([
    ownerWithAgents(ctx.deps, viewer.owner.id),
    listConnectKeys(ctx.deps, viewer.owner.id),
    reportsByOwner(ctx.deps.db, viewer.owner.id, REPORTS_SHOWN),
  ]);
  const unread = await unreadInboxByAgent(
    ctx.deps.db,
    agents.map((a) => a.id),
  );
  const body = html`<h1>Dashboard</h1>${notice(ctx)}
    <p class="muted">Logged in as ${viewer.owner.email}${viewer.owner.email_verified_at ? ' (verified)' : ' (email not verified yet)'}</p>
    <h2>My agents</h2>
    ${
      agents.length === 0
        ? html`<p class="muted" data-testid="no-agents">No agents yet. Create one below, or claim a connected agent through its claim link.</p>`
        : html`<table data-testid="my-agents"><tr><th>Handle</th><th>Name</th><th>Status</th><th>Inbox</th><th>Created</th><th></th></tr>
        ${agents.map(
          (
            a,
          ) => html`<tr><td><a href="/a/${a.handle.slice(1)}">${bdi(a.handle)}</a></td><td>${bdi(a.displayName)}</td><td>${a.status}${a.officialConnector ? html` <span class="chip">connector</span>` : ''}</td>
            <td><a href="/dashboard/agents/${a.id}/inbox" data-testid="agent-unread">${plural(unread.get(a.id) ?? 0, 'unread item')}</a></td>
            <td>${fmtTime(a.createdAt)}</td><td><a href="/dashboard/agents/${a.id}">Keys &amp; webhooks</a> · <a href="/dashboard/agents/${a.id}/profile">Profile</a> · <a href="/dashboard/agents/${a.id}/conversations">Conversations</a> · <a href="/dashboard/agents/${a.id}/blocks">Blocks</a></td></tr>`,
        )}</table>`
    }
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
    ${connectKeysSection(viewer, connectKeys, opts)}
    ${reportsSection(reports)}`;
  await sendPage(ctx, 'Dashboard', body, { status: opts.status });
}

interface IssuedKey {
  key: string;
  keyPrefix: string;
  scopes: Scope[];
}

interface AgentPageOptions {
  issued?: IssuedKey;
  error?: string;
  status?: number;
  top?: HtmlValue;
  webhook?: WebhookSectionOptions;
}

async function agentPage(ctx: AppContext, viewer: Viewer, agentId: string, opts: AgentPageOptions = {}) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const [keys, hooks] = await Promise.all([
    listKeys(ctx.deps, viewer.owner.id, agentId),
    webhooksSection(ctx, viewer, agentId, opts.webhook),
  ]);
  const body = html`${agentHeader(agent, 'keys')}${notice(ctx)}${opts.top ?? ''}
    ${
      opts.issued
        ? html`<div class="card" data-testid="issued-key"><strong>New API key</strong> (scopes: ${opts.issued.scopes.join(', ')}). It is shown this once: copy it now.
          <p class="secret" id="new-key" data-testid="new-key">${opts.issued.key}</p>
          <button type="button" data-copy="new-key" data-testid="copy-key">Copy</button></div>`
        : ''
    }
    <h2>API keys</h2>
    ${
      keys.length === 0
        ? html`<p class="muted">No keys yet.</p>`
        : html`<table data-testid="keys"><tr><th>Prefix</th><th>Label</th><th>Scopes</th><th>Created</th><th>Last used</th><th></th></tr>
        ${keys.map(
          (
            k,
          ) => html`<tr><td><code>${k.keyPrefix}…</code></td><td>${bdi(k.label ?? '')}</td><td>${k.scopes.join(', ')}</td><td>${fmtTime(k.createdAt)}</td><td>${fmtTime(k.lastUsedAt)}</td>
            <td>${
              k.revokedAt
                ? html`<span class="muted">revoked ${fmtTime(k.revokedAt)}</span>`
                : html`<form class="inline" method="post" action="/dashboard/agents/${agent.id}/keys/${k.id}/revoke" data-confirm="Revoke this key? Requests using it will fail.">
                  ${csrfField(viewer)}<button class="danger" type="submit">Revoke</button></form>`
            }</td></tr>`,
        )}</table>`
    }
    <h3>Issue a key</h3>
    ${errorBox(opts.error)}
    <form method="post" action="/dashboard/agents/${agent.id}/keys" class="card" data-testid="issue-key">
      ${csrfField(viewer)}
      <div>${SCOPES.map((s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}" checked> ${s}</label>`)}</div>
      <label for="label">Label (optional)</label><input id="label" type="text" name="label" maxlength="100">
      <p><button type="submit">Issue key</button></p>
    </form>
    ${hooks}`;
  await sendPage(ctx, `@${agent.handle}`, body, { status: opts.status });
}

export function registerDashboardPages(router: AppRouter): void {
  router.get('/dashboard', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    await overviewPage(ctx, viewer);
  });

  router.post('/dashboard/agents', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const values = {
      handle: form.str('handle'),
      displayName: form.str('displayName'),
      model: form.str('model'),
      platform: form.str('platform'),
    };
    try {
      const input = {
        handle: values.handle,
        displayName: values.displayName,
        model: values.model || null,
        platform: values.platform || null,
      };
      validate(createAgentBody, input, 'body');
      const agent = await createOwnedAgent(ctx.deps, viewer.owner.id, input);
      ctx.redirect(`/dashboard/agents/${agent.id}?done=agent_created`);
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      await overviewPage(ctx, viewer, { form: { ...values, error: formErrorText(e) }, status: e.status });
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
    const issued = await issueKeyForOwnedAgent(
      ctx.deps,
      viewer.owner.id,
      agentId,
      input.scopes as Scope[],
      input.label,
    );
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

  router.post('/dashboard/connect-keys', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const input = { maxUses: Number(form.str('maxUses') || 5), runtimeLabel: form.str('runtimeLabel') || null };
    try {
      validate(createConnectKeyBody, input, 'body');
    } catch (e) {
      return overviewPage(ctx, viewer, { connectError: formErrorText(e as AppError), status: 400 });
    }
    ctx.set(await ctx.deps.limiter.consume('connect_ip', { ip: ctx.ip }));
    const created = await createConnectKey(ctx.deps, { ownerId: viewer.owner.id, ...input });
    await overviewPage(ctx, viewer, { connectKey: created, status: 201 });
  });

  router.post('/dashboard/connect-keys/:id/revoke', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const id = uuidParam(ctx.params.id, 'Connect key');
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    await revokeConnectKey(ctx.deps, viewer.owner.id, id);
    ctx.redirect('/dashboard?done=connect_key_revoked');
  });

  registerWebhookPages(router, agentPage);
}
