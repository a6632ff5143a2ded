import type { AppContext, AppRouter } from '../../http/route';
import { AppError } from '../../errors';
import { validate } from '../../http/validate';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateSecret,
  updateWebhook,
} from '../../webhooks/service';
import { webhookRoutes } from '../../webhooks/routes';
import { WEBHOOK_EVENTS } from '../../webhooks/policy';
import { ownedAgent } from '../../owners/service';
import { html, HtmlValue } from '../html';
import { csrfField } from '../layout';
import { sendPage } from '../render';
import { checkFormCsrf, readForm, requireViewer, Viewer } from '../viewer';
import { formErrorText } from './auth';
import { errorBox, fmtTime, notice, uuidParam } from '../ui';

// The API's own body schema: the form accepts exactly what POST …/webhooks accepts.
const createBody = webhookRoutes.find((r) => r.operationId === 'createWebhook')!.body!;

export interface WebhookSectionOptions {
  created?: { id: string; secret: string };
  error?: string;
  url?: string;
}

function secretBox(title: string, secret: string): HtmlValue {
  return html`<div class="card" data-testid="webhook-secret"><strong>${title}</strong> It is shown this once: store it where your receiver verifies signatures.
    <p class="secret" id="webhook-secret">${secret}</p><button type="button" data-copy="webhook-secret">Copy</button></div>`;
}

/** The agent page's webhook section: list with enable/disable, rotate, delete, and a create form. */
export async function webhooksSection(
  ctx: AppContext,
  viewer: Viewer,
  agentId: string,
  opts: WebhookSectionOptions = {},
): Promise<HtmlValue> {
  const hooks = await listWebhooks(ctx.deps, viewer.owner.id, agentId);
  const base = `/dashboard/agents/${agentId}/webhooks`;
  return html`<h2>Webhooks</h2>
    ${opts.created ? secretBox('Webhook created. Signing secret:', opts.created.secret) : ''}
    ${
      hooks.length === 0
        ? html`<p class="muted">No webhooks.</p>`
        : html`<table data-testid="webhooks"><tr><th>URL</th><th>Events</th><th>State</th><th></th></tr>
        ${hooks.map(
          (
            w,
          ) => html`<tr data-webhook-id="${w.id}"><td><code>${w.url}</code></td><td>${w.events.map((e) => html`<span class="chip">${e}</span>`)}</td>
            <td>${w.enabled ? html`<span class="chip status-live">enabled</span>` : html`<span class="chip status-pending">disabled</span>`}</td>
            <td><a href="${base}/${w.id}">Deliveries</a>
              <form class="inline" method="post" action="${base}/${w.id}/enabled">${csrfField(viewer)}<input type="hidden" name="enabled" value="${w.enabled ? 'false' : 'true'}">
                <button class="secondary" type="submit">${w.enabled ? 'Disable' : 'Enable'}</button></form>
              <form class="inline" method="post" action="${base}/${w.id}/rotate-secret" data-confirm="Rotate the signing secret? Deliveries are signed with both the new and the old secret for 24 hours, then with the new one only.">${csrfField(viewer)}<button class="secondary" type="submit">Rotate secret</button></form>
              <form class="inline" method="post" action="${base}/${w.id}/delete" data-confirm="Delete this webhook?">${csrfField(viewer)}<button class="danger" type="submit">Delete</button></form></td></tr>`,
        )}</table>`
    }
    ${errorBox(opts.error)}
    <form method="post" action="${base}" class="card" data-testid="create-webhook">${csrfField(viewer)}
      <label for="url">URL (https)</label><input id="url" type="url" name="url" required value="${opts.url ?? ''}">
      <div>${WEBHOOK_EVENTS.map((e) => html`<label class="check"><input type="checkbox" name="events" value="${e}" checked> ${e}</label>`)}</div>
      <p><button type="submit">Add webhook</button></p></form>`;
}

async function deliveriesPage(
  ctx: AppContext,
  viewer: Viewer,
  agentId: string,
  webhookId: string,
  top: HtmlValue = '',
) {
  const agent = await ownedAgent(ctx.deps.db, viewer.owner.id, agentId);
  const [hooks, deliveries] = await Promise.all([
    listWebhooks(ctx.deps, viewer.owner.id, agentId),
    listDeliveries(ctx.deps, viewer.owner.id, agentId, webhookId),
  ]);
  const hook = hooks.find((h) => h.id === webhookId)!;
  const base = `/dashboard/agents/${agentId}/webhooks/${webhookId}`;
  await sendPage(
    ctx,
    'Webhook deliveries',
    html`<p><a href="/dashboard/agents/${agentId}">← @${agent.handle}</a></p>
      <h1>Deliveries</h1>${notice(ctx)}${top}
      <p><code>${hook.url}</code> ${hook.enabled ? html`<span class="chip status-live">enabled</span>` : html`<span class="chip status-pending">disabled</span>`}</p>
      ${
        deliveries.length === 0
          ? html`<p class="muted" data-testid="no-deliveries">No deliveries yet.</p>`
          : html`<table data-testid="deliveries"><tr><th>When</th><th>Event</th><th>Attempts</th><th>Status</th><th>Response</th><th>Latency</th><th>Next attempt</th><th></th></tr>
          ${deliveries.map(
            (
              d,
            ) => html`<tr><td>${fmtTime(d.createdAt)}</td><td>${d.type}<div class="small muted"><code>${d.eventId}</code></div></td><td>${d.attempt}</td>
              <td><span class="chip">${d.status}</span></td><td>${d.responseCode ?? '—'}</td><td>${d.latencyMs === null ? '—' : `${d.latencyMs} ms`}</td><td>${fmtTime(d.nextAttemptAt)}</td>
              <td>${
                hook.enabled
                  ? html`<form class="inline" method="post" action="${base}/deliveries/${d.id}/redeliver">${csrfField(viewer)}<button class="secondary" type="submit">Redeliver</button></form>`
                  : ''
              }</td></tr>`,
          )}</table>`
      }`,
  );
}

type AgentPage = (
  ctx: AppContext,
  viewer: Viewer,
  agentId: string,
  opts: { webhook?: WebhookSectionOptions; status?: number; top?: HtmlValue },
) => Promise<void>;

export function registerWebhookPages(router: AppRouter, agentPage: AgentPage): void {
  async function formRequest(ctx: AppContext) {
    const viewer = await requireViewer(ctx);
    const agentId = uuidParam(ctx.params.id, 'Agent');
    const webhookId = ctx.params.webhookId ? uuidParam(ctx.params.webhookId, 'Webhook') : '';
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    return { viewer, agentId, webhookId, form };
  }

  router.post('/dashboard/agents/:id/webhooks', async (ctx: AppContext) => {
    const { viewer, agentId, form } = await formRequest(ctx);
    const input = { url: form.str('url'), events: form.all('events') };
    try {
      validate(createBody, input, 'body');
      const created = await createWebhook(ctx.deps, viewer.owner.id, agentId, input);
      await agentPage(ctx, viewer, agentId, { webhook: { created }, status: 201 });
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500 || e.status === 404) throw e;
      const msg = input.events.length === 0 ? 'Choose at least one event.' : formErrorText(e);
      await agentPage(ctx, viewer, agentId, { webhook: { error: msg, url: input.url }, status: e.status });
    }
  });

  router.post('/dashboard/agents/:id/webhooks/:webhookId/enabled', async (ctx: AppContext) => {
    const { viewer, agentId, webhookId, form } = await formRequest(ctx);
    await updateWebhook(ctx.deps, viewer.owner.id, agentId, webhookId, { enabled: form.str('enabled') === 'true' });
    ctx.redirect(`/dashboard/agents/${agentId}?done=webhook_updated`);
  });

  router.post('/dashboard/agents/:id/webhooks/:webhookId/rotate-secret', async (ctx: AppContext) => {
    const { viewer, agentId, webhookId } = await formRequest(ctx);
    const { secret } = await rotateSecret(ctx.deps, viewer.owner.id, agentId, webhookId);
    await agentPage(ctx, viewer, agentId, {
      top: secretBox(
        'Secret rotated: deliveries carry a signature by each secret for 24 hours, then by this one only. New signing secret:',
        secret,
      ),
    });
  });

  router.post('/dashboard/agents/:id/webhooks/:webhookId/delete', async (ctx: AppContext) => {
    const { viewer, agentId, webhookId } = await formRequest(ctx);
    await deleteWebhook(ctx.deps, viewer.owner.id, agentId, webhookId);
    ctx.redirect(`/dashboard/agents/${agentId}?done=webhook_deleted`);
  });

  router.get('/dashboard/agents/:id/webhooks/:webhookId', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    await deliveriesPage(ctx, viewer, uuidParam(ctx.params.id, 'Agent'), uuidParam(ctx.params.webhookId, 'Webhook'));
  });

  router.post('/dashboard/agents/:id/webhooks/:webhookId/deliveries/:deliveryId/redeliver', async (ctx: AppContext) => {
    const { viewer, agentId, webhookId } = await formRequest(ctx);
    const deliveryId = uuidParam(ctx.params.deliveryId, 'Delivery');
    await redeliver(ctx.deps, viewer.owner.id, agentId, webhookId, deliveryId);
    ctx.redirect(`/dashboard/agents/${agentId}/webhooks/${webhookId}?done=redelivered`);
  });
}
