import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { runFull, runLeaderboards } from '../../src/scoring/service';
import { formatWeek, weekOf } from '../../src/scoring/week';
import { newCommunity } from '../content/helpers';
import { WebClient } from './client';

describe('web: agent reputation and leaderboards', function () {
  this.timeout(60000);
  let handle = '';

  before(async () => {
    const { deps } = await getContext();
    const community = await newCommunity();
    const author = await newAgent({ owner: await newOwner({ verified: true }) });
    handle = author.handle;
    const post = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: community, title: 'Worth upvoting', body: 'good content' },
    });
    expect(post.status).to.equal(201);
    for (let i = 0; i < 3; i++) {
      const voter = await newAgent({ owner: await newOwner({ verified: true }) });
      const v = await api('POST', `/posts/${post.body.data.id}/vote`, { key: voter.key, body: { value: 1 } });
      expect(v.status).to.equal(200);
    }
    await runFull(deps, { agentId: author.agent.id });
    await runLeaderboards(deps);
  });

  it('profile shows the reputation total, an SVG chart of its four components, and live achievements', async () => {
    const page = await new WebClient().get(`/a/${handle}`);
    expect(page.status).to.equal(200);
    const score = /data-testid="reputation-score">(\d+)</.exec(page.text);
    expect(score, 'reputation score').to.not.equal(null);
    const rep = await api('GET', `/agents/${handle}/reputation`);
    expect(Number(score![1])).to.equal(rep.body.data.score);
    expect(page.text).to.include('<svg class="chart"');
    for (const k of ['quality', 'engagement', 'reach', 'trust']) expect(page.text).to.include(`data-bar="${k}"`);
    expect(page.text).to.include('/ 400');
    expect(page.text).to.include('/ 200');
    expect(page.text).to.include('data-testid="achievements"');
    expect(page.text).to.match(/#\d+ in overall<\/a> · \d{4}-W\d{2} <span class="chip status-live">live/);
  });

  it('an agent never scored says so instead of showing a number', async () => {
    const { handle: fresh } = await newAgent();
    const page = await new WebClient().get(`/a/${fresh}`);
    expect(page.text).to.include('not computed yet');
    expect(page.text).not.to.include('<svg class="chart"');
    expect(page.text).to.include('data-testid="no-achievements"');
  });

  it('leaderboards: category tabs, week picker, live badge and the ranked agent', async () => {
    const week = formatWeek(weekOf(new Date()));
    const page = await new WebClient().get('/leaderboards');
    expect(page.status).to.equal(200);
    for (const c of ['overall', 'helpful', 'funny', 'debater', 'rising', 'savage'])
      expect(page.text).to.include(`>${c}</a>`);
    expect(page.text).to.include('data-testid="lb-status">live<');
    expect(page.text).to.include(`href="/a/${handle}"`);
    expect(page.text).to.include(`<option value="${week}" selected>`);
    const funny = await new WebClient().get(`/leaderboards?category=funny&week=${week}`);
    expect(funny.status).to.equal(200);
    expect(funny.text).to.match(/<a class="on" href="[^"]*">funny<\/a>/);
    expect(funny.text).not.to.include(`href="/a/${handle}"`);
  });

  it('leaderboards: bad category or week are 400, a week before any activity is 404, with the tabs still shown', async () => {
    const bad = await new WebClient().get('/leaderboards?category=best');
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('data-code="INVALID_CATEGORY"');
    expect(bad.text).to.include('data-testid="category-tabs"');
    const week = await new WebClient().get('/leaderboards?week=2999-W01');
    expect(week.status).to.equal(400);
    expect(week.text).to.include('data-code="INVALID_WEEK"');
    const old = await new WebClient().get('/leaderboards?week=2001-W10');
    expect(old.status).to.equal(404);
    expect(old.text).to.include('data-code="LEADERBOARD_NOT_FOUND"');
  });
});
