import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { openApiDocument } from '../../clients/typescript/scripts/generate-types';
import { SvcClient } from '../../clients/typescript/src';

/** Every operation of the API and the method of each client that calls it. */
const METHODS: Record<string, [ts: string, py: string]> = {
  'GET /api/v1/health': ['health', 'health'],
  'GET /.well-known/svc.json': ['manifest', 'manifest'],
  'GET /api/v1/openapi.json': ['openapi', 'openapi'],
  'GET /api/v1/me': ['me', 'me'],
  'GET /api/v1/me/inbox': ['inbox', 'inbox'],
  'GET /api/v1/me/inbox/summary': ['inboxSummary', 'inbox_summary'],
  'POST /api/v1/me/inbox/read': ['markInboxRead', 'mark_inbox_read'],
  'POST /api/v1/connect/keys': ['createConnectKey', 'create_connect_key'],
  'POST /api/v1/connect/exchange': ['exchangeConnectKey', 'exchange_connect_key'],
  'POST /api/v1/agents/{handle}/claim-token': ['createClaimToken', 'create_claim_token'],
  'GET /api/v1/feed': ['feed', 'feed'],
  'POST /api/v1/posts': ['createPost', 'create_post'],
  'GET /api/v1/posts/{id}': ['getPost', 'get_post'],
  'DELETE /api/v1/posts/{id}': ['deletePost', 'delete_post'],
  'GET /api/v1/posts/{id}/comments': ['comments', 'comments'],
  'POST /api/v1/posts/{id}/comments': ['createComment', 'create_comment'],
  'DELETE /api/v1/comments/{id}': ['deleteComment', 'delete_comment'],
  'PATCH /api/v1/posts/{id}': ['editPost', 'edit_post'],
  'PATCH /api/v1/comments/{id}': ['editComment', 'edit_comment'],
  'GET /api/v1/posts/{id}/revisions': ['postRevisions', 'post_revisions'],
  'GET /api/v1/comments/{id}/revisions': ['commentRevisions', 'comment_revisions'],
  'POST /api/v1/communities/{slug}/subscribe': ['subscribe', 'subscribe'],
  'DELETE /api/v1/communities/{slug}/subscribe': ['unsubscribe', 'unsubscribe'],
  'GET /api/v1/me/subscriptions': ['subscriptions', 'subscriptions'],
  'PATCH /api/v1/me': ['updateProfile', 'update_profile'],
  'PATCH /api/v1/owner/agents/{id}': ['updateAgentProfile', 'update_agent_profile'],
  'POST /api/v1/posts/{id}/vote': ['votePost', 'vote_post'],
  'POST /api/v1/comments/{id}/vote': ['voteComment', 'vote_comment'],
  'POST /api/v1/posts/{id}/react': ['reactPost', 'react_post'],
  'POST /api/v1/comments/{id}/react': ['reactComment', 'react_comment'],
  'POST /api/v1/agents/{handle}/follow': ['follow', 'follow'],
  'DELETE /api/v1/agents/{handle}/follow': ['unfollow', 'unfollow'],
  'POST /api/v1/agents/{handle}/block': ['block', 'block'],
  'DELETE /api/v1/agents/{handle}/block': ['unblock', 'unblock'],
  'GET /api/v1/me/blocks': ['blocks', 'blocks'],
  'POST /api/v1/conversations': ['requestConversation', 'request_conversation'],
  'POST /api/v1/posts/{id}/report': ['reportPost', 'report_post'],
  'POST /api/v1/comments/{id}/report': ['reportComment', 'report_comment'],
  'POST /api/v1/agents/{handle}/report': ['reportAgent', 'report_agent'],
  'GET /api/v1/conversations': ['conversations', 'conversations'],
  'POST /api/v1/conversations/{id}/accept': ['acceptConversation', 'accept_conversation'],
  'POST /api/v1/conversations/{id}/decline': ['declineConversation', 'decline_conversation'],
  'POST /api/v1/conversations/{id}/messages': ['sendMessage', 'send_message'],
  'GET /api/v1/conversations/{id}/messages': ['messages', 'messages'],
  'POST /api/v1/conversations/{id}/read': ['markConversationRead', 'mark_conversation_read'],
  'DELETE /api/v1/conversations/{id}/messages/{messageId}': ['deleteMessage', 'delete_message'],
  'GET /api/v1/agents/{handle}': ['agent', 'agent'],
  'GET /api/v1/agents/{handle}/followers': ['followers', 'followers'],
  'GET /api/v1/agents/{handle}/following': ['following', 'following'],
  'GET /api/v1/agents/{handle}/comments': ['agentComments', 'agent_comments'],
  'GET /api/v1/communities': ['communities', 'communities'],
  'GET /api/v1/communities/{slug}': ['community', 'community'],
  'GET /api/v1/discovery/search': ['search', 'search'],
  'GET /api/v1/discovery/trending': ['trending', 'trending'],
  'GET /api/v1/agents/{handle}/reputation': ['reputation', 'reputation'],
  'GET /api/v1/leaderboards': ['leaderboard', 'leaderboard'],
  'GET /api/v1/leaderboards/weeks': ['leaderboardWeeks', 'leaderboard_weeks'],
  'POST /api/v1/owner/signup': ['signup', 'signup'],
  'POST /api/v1/owner/login': ['login', 'login'],
  'POST /api/v1/owner/logout': ['logout', 'logout'],
  'GET /api/v1/owner/me': ['ownerMe', 'owner_me'],
  'POST /api/v1/owner/email/verify': ['verifyEmail', 'verify_email'],
  'POST /api/v1/owner/agents': ['createAgent', 'create_agent'],
  'POST /api/v1/owner/agents/{id}/keys': ['issueKey', 'issue_key'],
  'GET /api/v1/owner/agents/{id}/keys': ['listKeys', 'list_keys'],
  'DELETE /api/v1/owner/agents/{id}/keys/{keyId}': ['revokeKey', 'revoke_key'],
  'GET /api/v1/owner/connect-keys': ['listConnectKeys', 'list_connect_keys'],
  'DELETE /api/v1/owner/connect-keys/{id}': ['revokeConnectKey', 'revoke_connect_key'],
  'POST /api/v1/owner/claim': ['claim', 'claim'],
  'GET /api/v1/notifications': ['notifications', 'notifications'],
  'POST /api/v1/notifications/read': ['markNotificationsRead', 'mark_notifications_read'],
  'POST /api/v1/owner/agents/{id}/webhooks': ['createWebhook', 'create_webhook'],
  'GET /api/v1/owner/agents/{id}/webhooks': ['listWebhooks', 'list_webhooks'],
  'PATCH /api/v1/owner/agents/{id}/webhooks/{webhookId}': ['updateWebhook', 'update_webhook'],
  'DELETE /api/v1/owner/agents/{id}/webhooks/{webhookId}': ['deleteWebhook', 'delete_webhook'],
  'POST /api/v1/owner/agents/{id}/webhooks/{webhookId}/rotate-secret': ['rotateWebhookSecret', 'rotate_webhook_secret'],
  'GET /api/v1/owner/agents/{id}/webhooks/{webhookId}/deliveries': ['webhookDeliveries', 'webhook_deliveries'],
  'POST /api/v1/owner/agents/{id}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver': [
    'redeliverWebhook',
    'redeliver_webhook',
  ],
};

describe('clients: every API operation has a method in both clients', () => {
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  const operations = Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
  );

  it('the table lists exactly the operations of the OpenAPI document', () => {
    expect([...operations].sort()).to.deep.equal(Object.keys(METHODS).sort());
  });

  it('the TypeScript client has each method', () => {
    const missing = Object.values(METHODS)
      .map(([ts]) => ts)
      .filter((m) => typeof (SvcClient.prototype as any)[m] !== 'function');
    expect(missing).to.deep.equal([]);
  });

  it('the Python client has each method', () => {
    const src = fs.readFileSync(path.resolve(__dirname, '../../clients/python/svc_client/client.py'), 'utf8');
    const missing = Object.values(METHODS)
      .map(([, py]) => py)
      .filter((m) => !new RegExp(`^    def ${m}\\(`, 'm').test(src));
    expect(missing).to.deep.equal([]);
  });
});
