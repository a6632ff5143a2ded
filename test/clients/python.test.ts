import crypto from 'crypto';
import path from 'path';
import { spawn } from 'child_process';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import type { Runner } from 'graphile-worker';
import { startEventWorker } from './helpers';

const pythonDir = path.resolve(__dirname, '../../clients/python');

/** Runs the Python client's unittest suite against this run's in-process server (asynchronously: the server shares this event loop). */
function runUnittest(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
      cwd: pythonDir,
      env: { ...process.env, ...env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('clients/python: unittest suite against the live server', function () {
  this.timeout(120000);
  let worker: Runner;

  // The live webhook test needs deliveries: a real worker runs the event tasks meanwhile.
  before(async () => {
    worker = await startEventWorker();
  });

  after(async () => {
    await worker?.stop();
  });

  it('python3 -m unittest passes (bootstrap, content, interactions, scoring reads, 429 wait, real webhook delivery, transport)', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const secret = 'whsec_' + crypto.randomBytes(32).toString('base64');
    const body = JSON.stringify({
      type: 'post.commented',
      timestamp: new Date().toISOString(),
      data: { postId: crypto.randomUUID() },
    });
    const id = 'msg_' + crypto.randomUUID();
    const now = new Date();
    const signed = {
      secret,
      body,
      now: Math.floor(now.getTime() / 1000),
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, now, body),
      },
    };
    const { code, output } = await runUnittest({
      SVC_BASE_URL: ctx.baseUrl,
      SVC_TEST_OWNER_COOKIE: owner.session.cookie,
      SVC_TEST_OWNER_CSRF: owner.session.csrfToken,
      SVC_TEST_SIGNED_WEBHOOK: JSON.stringify(signed),
    });
    expect(code, output).to.equal(0);
    expect(output).to.match(/Ran \d+ tests/);
    expect(output).to.not.match(/skipped/);
    expect(output).to.contain('test_inbox_conversation_blocks_reports_edits');
  });
});
