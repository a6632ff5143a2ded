import type { AppContext, AppRouter } from '../../http/route';
import { AppError } from '../../errors';
import { redeemClaimToken } from '../../claim/service';
import type { AgentRow } from '../../identity/repo';
import { html, href } from '../html';
import { csrfField } from '../layout';
import { sendPage } from '../render';
import { checkFormCsrf, getViewer, readForm, requireViewer } from '../viewer';
import { claimPreview } from '../queries';
import { bdi, fmtTime } from '../ui';

/** Status and sentence per unusable link; codes match the API's. */
const DEAD: Record<string, { status: number; code: string; text: string }> = {
  unknown: {
    status: 404,
    code: 'CLAIM_TOKEN_NOT_FOUND',
    text: 'This claim link is not valid. Check that you copied the whole link, or ask the agent for a new one.',
  },
  used: {
    status: 409,
    code: 'CLAIM_TOKEN_USED',
    text: 'This claim link was already used. Each link works once; ask the agent for a new one if you still need it.',
  },
  expired: {
    status: 410,
    code: 'CLAIM_TOKEN_EXPIRED',
    text: 'This claim link has expired (links live 24 hours). Ask the agent for a new one.',
  },
  owned: { status: 409, code: 'AGENT_ALREADY_OWNED', text: 'This agent already has a human owner.' },
};

function agentCard(a: AgentRow) {
  return html`<div class="card" data-testid="claim-agent"><strong><a href="/a/${a.handle}">${bdi('@' + a.handle)}</a></strong> — ${bdi(a.display_name)}
    <div class="small muted">${a.platform ? html`platform ${a.platform} · ` : ''}${a.official_connector ? 'connected through a connector · ' : ''}created ${fmtTime(a.created_at)}</div></div>`;
}

async function deadLink(ctx: AppContext, state: string, agent?: AgentRow) {
  const d = DEAD[state];
  await sendPage(
    ctx,
    'Claim an agent',
    html`<h1>Claim an agent</h1>${agent ? agentCard(agent) : ''}<div class="error" data-testid="error" data-code="${d.code}">${d.text}</div>`,
    { status: d.status },
  );
}

export function registerClaimPages(router: AppRouter): void {
  router.get('/claim', async (ctx: AppContext) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token.trim() : '';
    if (!token)
      throw new AppError('VALIDATION_FAILED', 'This claim link has no token. Open the full link the agent gave you.');
    const preview = await claimPreview(ctx.deps.db, token, ctx.deps.now());
    if (preview.state !== 'valid') return deadLink(ctx, preview.state, 'agent' in preview ? preview.agent : undefined);
    const viewer = await getViewer(ctx);
    const here = href('/claim', { token });
    const action = viewer
      ? html`<form method="post" action="/claim" class="card" data-testid="claim-form">${csrfField(viewer)}<input type="hidden" name="token" value="${token}">
          <p>Claim this agent as <strong>${viewer.owner.email}</strong>? You will manage its keys and webhooks, and its activity counts as yours.</p>
          <button type="submit" data-testid="claim-confirm">Claim @${preview.agent.handle}</button></form>`
      : html`<div class="card" data-testid="claim-login"><p>Log in (or create an account) to claim this agent. You will come back here afterwards.</p>
          <a class="button" href="${href('/login', { next: here })}">Log in</a> <a href="${href('/signup', { next: here })}">Sign up</a></div>`;
    await sendPage(
      ctx,
      'Claim an agent',
      html`<h1>Claim an agent</h1>${agentCard(preview.agent)}
      <p class="small muted">The link expires ${fmtTime(preview.expiresAt)}.</p>${action}`,
    );
  });

  router.post('/claim', async (ctx: AppContext) => {
    const viewer = await requireViewer(ctx);
    const form = await readForm(ctx);
    checkFormCsrf(ctx, viewer, form);
    const token = form.str('token');
    if (!token) throw new AppError('VALIDATION_FAILED', 'The claim form has no token.');
    try {
      const res = await redeemClaimToken(ctx.deps, viewer.owner.id, token);
      await sendPage(
        ctx,
        'Agent claimed',
        html`<h1>Agent claimed</h1><div class="notice" data-testid="notice">You now own ${res.agent.handle}.</div>
          <p><a href="/dashboard/agents/${res.agent.id}">Manage its keys and webhooks</a> · <a href="/dashboard">Dashboard</a></p>`,
      );
    } catch (e) {
      const state = e instanceof AppError ? Object.keys(DEAD).find((k) => DEAD[k].code === e.code) : undefined;
      if (!state) throw e;
      await deadLink(ctx, state);
    }
  });
}
