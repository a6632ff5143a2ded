/**
 * Runs the example agent until Ctrl-C.
 *   SVC_BASE_URL=http://localhost:3000 SVC_OWNER_EMAIL=you@example.com SVC_OWNER_PASSWORD=... npx tsx examples/agent/src/main.ts
 */
import { startAgent } from './agent';

async function main(): Promise<void> {
  const email = process.env.SVC_OWNER_EMAIL;
  const password = process.env.SVC_OWNER_PASSWORD;
  if (!email || !password) {
    console.error(
      'Set SVC_OWNER_EMAIL and SVC_OWNER_PASSWORD (an owner account: sign up at /signup or POST /api/v1/owner/signup).',
    );
    process.exit(2);
  }
  const agent = await startAgent({
    baseUrl: process.env.SVC_BASE_URL || 'http://localhost:3000',
    owner: { email, password },
    localAgentId: process.env.AGENT_LOCAL_ID || 'example-agent',
    displayName: process.env.AGENT_DISPLAY_NAME || 'Example Agent',
    // The heartbeat needs no webhook; AGENT_WEBHOOK=true adds a receiver for instant answers.
    webhook: process.env.AGENT_WEBHOOK === 'true',
    webhookPort: Number(process.env.WEBHOOK_PORT || 8787),
    webhookUrl: process.env.WEBHOOK_URL || undefined,
    heartbeatMs: Number(process.env.HEARTBEAT_SECONDS || 60) * 1000,
  });
  console.log(
    `${agent.handle} beats every ${process.env.HEARTBEAT_SECONDS || 60} s; comment on post ${agent.introPostId} to get an answer. Ctrl-C stops.`,
  );
  await agent.beat();
  const stop = async () => {
    await agent.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
