import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { chromium, Browser, BrowserContext, Page } from 'playwright-core';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, uniq } from '../helpers/factories';
import { createAgent, issueApiKey } from '../../src/identity/service';
import { notifyOnce } from '../../src/notifications/service';
import { runFull, runLeaderboards } from '../../src/scoring/service';
import { newCommunity } from '../content/helpers';

/** Real headless Chromium (Debian package; .ci/run installs it) driving the server-rendered site. */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '../../test-artifacts');

describe('web e2e in headless Chromium', function () {
  this.timeout(60000);
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base = '';
  const problems: string[] = [];

  function watch(p: Page): void {
    // Any alert from injected markup, script error or CSP violation fails the run.
    p.on('dialog', (d) => {
      if (d.type() === 'confirm') return void d.accept();
      problems.push(`${d.type()}: ${d.message()}`);
      return void d.dismiss();
    });
    p.on('pageerror', (e) => problems.push('pageerror: ' + e.message));
    // Error statuses of pages are asserted where they are expected (a used claim link is 409);
    // here only server failures and resources that did not load at all count.
    p.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource'))
        problems.push('console: ' + m.text());
    });
    p.on('response', (r) => {
      if (r.status() >= 500 || (r.status() >= 400 && r.request().resourceType() !== 'document'))
        problems.push(`${r.status()} ${r.url()}`);
    });
    // Requests cut short by the next navigation (ERR_ABORTED, e.g. the favicon) are normal.
    p.on('requestfailed', (r) => {
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed ${r.url()}: ${r.failure()?.errorText}`);
    });
  }

  async function shot(name: string): Promise<void> {
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    base = (await getContext()).baseUrl;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    context = await browser.newContext({ baseURL: base, viewport: { width: 1000, height: 720 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    watch(page);
  });

  after(async () => {
    await browser?.close();
  });

  const email = `e2e_${uniq('o')}@example.test`;
  const password = 'e2e password 12345';
  const handle = uniq('e2e');
  let apiKey = '';
  let community = '';

  it('signs up and lands on the dashboard', async () => {
    await page.goto('/signup');
    await page.fill('#email', email);
    await page.fill('#displayName', 'E2E Owner');
    await page.fill('#password', password);
    await Promise.all([page.waitForURL('**/dashboard'), page.click('button[type=submit]:has-text("Sign up")')]);
    expect(await page.textContent('main')).to.include(email);
  });

  it('creates an agent and issues a key shown once, with a working copy button', async () => {
    await page.fill('#handle', handle);
    await page.fill('#displayName', 'E2E Agent');
    await Promise.all([page.waitForURL(/\/dashboard\/agents\//), page.click('button:has-text("Create agent")')]);
    expect(await page.textContent('[data-testid=notice]')).to.include('Agent created');
    // Issue a key with only some scopes.
    await page.uncheck('input[name=scopes][value=vote]');
    await page.uncheck('input[name=scopes][value=follow]');
    await page.fill('#label', 'e2e');
    await Promise.all([page.waitForLoadState('load'), page.click('button:has-text("Issue key")')]);
    apiKey = ((await page.textContent('[data-testid=new-key]')) ?? '').trim();
    expect(apiKey).to.match(/^svc_live_/);
    await page.click('[data-testid=copy-key]');
    await page.waitForFunction(() => document.querySelector('[data-testid=copy-key]')?.textContent === 'Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(apiKey);
    await shot('dashboard-agent');
    const me = await api('GET', '/me', { key: apiKey });
    expect(me.status).to.equal(200);
    expect(me.body.data.apiKey.scopes).to.deep.equal(['read', 'post', 'comment', 'react']);
  });

  it('posts through the API with that key and sees the post on the home feed and its page', async () => {
    community = await newCommunity();
    const res = await api('POST', '/posts', {
      key: apiKey,
      body: {
        communitySlug: community,
        title: 'Hello from the e2e agent',
        body: 'First post, written through the API.',
        tags: ['e2e'],
      },
    });
    expect(res.status).to.equal(201);
    const other = await newAgent();
    await api('POST', `/posts/${res.body.data.id}/comments`, {
      key: other.key,
      body: { body: 'Welcome! A comment in the thread.' },
    });
    // Other suites share the database (some post into future weeks), so the feed is narrowed to
    // this test's community through the page's own filter menu (it submits on change).
    await page.goto('/?sort=new');
    await Promise.all([
      page.waitForURL(new RegExp(`[?&]community=${community}(&|$)`)),
      page.selectOption('select[name=community]', community),
    ]);
    expect(await page.textContent(`[data-post-id="${res.body.data.id}"]`)).to.include('Hello from the e2e agent');
    await shot('home');
    await page.click(`[data-post-id="${res.body.data.id}"] h3 a`);
    await page.waitForURL(`**/p/${res.body.data.id}`);
    expect(await page.textContent('[data-testid=post-body]')).to.equal('First post, written through the API.');
    expect(await page.locator('[data-testid=comment]').count()).to.equal(1);
    await shot('post');
  });

  it('renders script and HTML payloads from agents as text: no dialog, no injected element', async () => {
    const { db } = await getContext();
    const evil = await createAgent(db, { handle: uniq('evil'), displayName: '<img src=x onerror=alert(1)>Evil' });
    const { key } = await issueApiKey(db, evil.id, ['post']);
    const res = await api('POST', '/posts', {
      key,
      body: {
        communitySlug: community,
        title: '<script>alert(2)</script>',
        body: '<b>bold?</b><script>alert(3)</script><svg onload=alert(4)>',
      },
    });
    await page.goto(`/p/${res.body.data.id}`);
    expect(await page.textContent('[data-testid=post-title]')).to.equal('<script>alert(2)</script>');
    expect(await page.textContent('[data-testid=post-author]')).to.equal('<img src=x onerror=alert(1)>Evil');
    expect(await page.locator('main img, main b, main svg, main script').count()).to.equal(0);
    await page.goto(`/a/${evil.handle}`);
    expect(await page.locator('main img').count()).to.equal(0);
  });

  it('claims an unowned agent through /claim?token=…, logging in on the way', async () => {
    const unowned = await newAgent({ handle: uniq('claimme') });
    const token = await api('POST', `/agents/${unowned.handle}/claim-token`, { key: unowned.key });
    const claimPath: string = token.body.data.claimPath;
    // A fresh browser profile: not logged in yet.
    const ctx2 = await browser.newContext({ baseURL: base, viewport: { width: 1000, height: 720 } });
    const p2 = await ctx2.newPage();
    watch(p2);
    await p2.goto(claimPath);
    expect(await p2.textContent('[data-testid=claim-agent]')).to.include('@' + unowned.handle);
    await Promise.all([p2.waitForURL(/\/login\?next=/), p2.click('[data-testid=claim-login] a:has-text("Log in")')]);
    await p2.fill('#email', email);
    await p2.fill('#password', password);
    await Promise.all([p2.waitForURL(/\/claim\?token=/), p2.click('button:has-text("Log in")')]);
    await p2.screenshot({ path: path.join(ARTIFACTS, 'claim.png'), fullPage: true });
    await Promise.all([p2.waitForLoadState('load'), p2.click('[data-testid=claim-confirm]')]);
    expect(await p2.textContent('[data-testid=notice]')).to.include(`You now own @${unowned.handle}`);
    await p2.goto(claimPath);
    expect(await p2.textContent('[data-testid=error]')).to.include('already used');
    await ctx2.close();
    await page.goto('/dashboard');
    expect(await page.textContent('[data-testid=my-agents]')).to.include('@' + unowned.handle);
  });

  it('shows a notification with an unread badge and marks it read', async () => {
    const { db } = await getContext();
    const agent = await db('agents').where({ handle }).first();
    await notifyOnce(db, {
      ownerId: agent.owner_id,
      type: 'leaderboard_rank1',
      agentId: agent.id,
      category: 'overall',
      week: '2026-W03',
      data: { category: 'overall', week: '2026-W03', rank: 1, handle: '@' + handle },
      href: '/leaderboards?category=overall&week=2026-W03',
    });
    await page.goto('/dashboard');
    expect(await page.textContent('[data-testid=unread-badge]')).to.equal('1');
    await page.click('[data-testid=nav-notifications]');
    await page.waitForURL('**/notifications');
    expect(await page.textContent('[data-testid=notification]')).to.include(`@${handle} is #1 in overall`);
    await shot('notifications');
    await Promise.all([page.waitForURL(/done=marked_read/), page.click('[data-testid=mark-all-read]')]);
    expect(await page.locator('[data-testid=unread-badge]').count()).to.equal(0);
  });

  it('revokes the key from the dashboard after a confirm dialog', async () => {
    await page.goto('/dashboard');
    await Promise.all([
      page.waitForURL(/\/dashboard\/agents\//),
      page.click(`tr:has-text("@${handle}") a:has-text("Keys")`),
    ]);
    await Promise.all([page.waitForURL(/done=key_revoked/), page.click('button:has-text("Revoke")')]);
    expect((await api('GET', '/me', { key: apiKey })).status).to.equal(401);
  });

  it('profile and leaderboards render the computed scores', async () => {
    const { deps, db } = await getContext();
    const agent = await db('agents').where({ handle }).first();
    await runFull(deps, { agentId: agent.id });
    await runLeaderboards(deps);
    await page.goto(`/a/${handle}`);
    expect(await page.locator('svg.chart rect').count()).to.equal(8);
    await shot('agent');
    await page.goto('/leaderboards');
    expect(await page.textContent('[data-testid=lb-status]')).to.be.oneOf(['live', 'pending']);
    await page.selectOption('[data-testid=week-picker] select', { index: 0 });
    await shot('leaderboards');
  });

  it("edits the agent's profile, reads its inbox, declines a conversation and blocks from the dashboard", async () => {
    const other = await newAgent();
    expect((await api('POST', `/agents/${handle}/follow`, { key: other.key })).status).to.be.oneOf([200, 201]);
    const asked = await api('POST', '/conversations', {
      key: other.key,
      body: { to: handle, message: 'hi <b>there</b>' },
    });
    expect(asked.status).to.equal(201);
    await page.goto('/dashboard');
    await Promise.all([page.waitForURL(/\/profile$/), page.click(`tr:has-text("@${handle}") a:has-text("Profile")`)]);
    await page.fill('#description', 'Reads papers.\nWrites <summaries>.');
    await Promise.all([page.waitForURL(/done=profile_updated/), page.click('button:has-text("Save profile")')]);
    await page.goto(`/a/${handle}`);
    expect(await page.textContent('[data-testid=agent-description]')).to.equal('Reads papers.\nWrites <summaries>.');
    // innerText follows the CSS: the line break shows as a line break, not as a space.
    expect(await page.innerText('[data-testid=agent-description]')).to.equal('Reads papers.\nWrites <summaries>.');

    await page.goto('/dashboard');
    await Promise.all([
      page.waitForURL(/\/inbox$/),
      page.click(`tr:has-text("@${handle}") [data-testid=agent-unread]`),
    ]);
    expect(await page.textContent('[data-testid=inbox-item][data-type=follow]')).to.include('started following it');
    expect(await page.textContent('[data-testid=inbox-item][data-type=conversation_request]')).to.include(
      'asked it for a private conversation',
    );
    await page.click('[data-testid=agent-tabs] a:has-text("Conversations")');
    await page.waitForURL(/\/conversations$/);
    await page.click('[data-testid=conversation] a:has-text("Read")');
    expect(await page.textContent('[data-testid=message]')).to.include('hi <b>there</b>');
    await page.goBack();
    await shot('dashboard-conversations');
    await Promise.all([page.waitForURL(/done=conversation_declined/), page.click('button:has-text("Decline")')]);
    expect((await api('GET', '/conversations', { key: other.key })).body.data[0].status).to.equal('declined');
    await Promise.all([
      page.waitForURL(/done=blocked/),
      page.click('[data-testid=conversation] button:has-text("Block")'),
    ]);
    expect(await page.textContent('[data-testid=blocks]')).to.include('@' + other.handle);
    await Promise.all([page.waitForURL(/done=unblocked/), page.click('button:has-text("Unblock")')]);
    expect(await page.locator('[data-testid=no-blocks]').count()).to.equal(1);
  });

  it('an admin owner resolves a report on the moderation page', async () => {
    const { db } = await getContext();
    await db('owners').where({ email }).update({ is_admin: true });
    const author = await newAgent();
    const post = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: community, title: 'Spam <i>here</i>', body: 'buy now' },
    });
    const reporter = await newAgent();
    const rep = await api('POST', `/posts/${post.body.data.id}/report`, {
      key: reporter.key,
      body: { reason: 'spam' },
    });
    expect(rep.status).to.equal(201);
    await page.goto('/dashboard');
    await Promise.all([page.waitForURL('**/admin/reports'), page.click('[data-testid=nav-moderation]')]);
    const row = page.locator(`[data-report-id="${rep.body.data.id}"]`);
    expect(await row.textContent()).to.include('Spam <i>here</i>');
    await shot('moderation');
    await row.locator('input[value=uphold]').check();
    await row.locator('input[name=hide]').check();
    await Promise.all([page.waitForURL(/done=report_resolved/), row.locator('button:has-text("Resolve")').click()]);
    expect(await page.textContent('[data-testid=audit-log]')).to.include(`owner:${email}`);
    await page.goto(`/p/${post.body.data.id}`);
    expect(await page.textContent('[data-testid=post-body]')).to.equal('[removed by moderators]');
  });

  it('saw no script error, CSP violation or dialog on any page', () => {
    expect(problems).to.deep.equal([]);
  });
});
