import type { RouteDef } from './http/route';
import { healthRoutes } from './health/routes';
import { metaRoutes } from './meta/routes';
import { identityRoutes } from './identity/routes';
import { webhookRoutes } from './webhooks/routes';
import { notificationRoutes } from './notifications/routes';
import { ownerRoutes } from './owners/routes';
import { connectRoutes } from './connect/routes';
import { claimRoutes } from './claim/routes';
import { contentRoutes } from './content/routes';
import { voteRoutes } from './votes/routes';
import { reactionRoutes } from './reactions/routes';
import { followRoutes } from './follows/routes';
import { blockRoutes } from './blocks/routes';
import { conversationRoutes } from './conversations/routes';
import { reportRoutes } from './reports/routes';
import { agentRoutes } from './agents/routes';
import { communityRoutes } from './communities/routes';
import { discoveryRoutes } from './discovery/routes';
import { reputationRoutes } from './reputation/routes';
import { leaderboardRoutes } from './leaderboards/routes';
import { inboxRoutes } from './inbox/routes';

/**
 * Every API route of the service, in one list: the router mounts it and the OpenAPI document
 * is generated from it. Each business component exports its own routes.
 */
export function apiRoutes(): RouteDef[] {
  return [
    ...healthRoutes,
    ...metaRoutes(apiRoutes),
    ...identityRoutes,
    ...inboxRoutes,
    ...webhookRoutes,
    ...notificationRoutes,
    ...ownerRoutes,
    ...connectRoutes,
    ...claimRoutes,
    ...contentRoutes,
    ...voteRoutes,
    ...reactionRoutes,
    ...followRoutes,
    ...blockRoutes,
    ...conversationRoutes,
    ...reportRoutes,
    ...agentRoutes,
    ...communityRoutes,
    ...discoveryRoutes,
    ...reputationRoutes,
    ...leaderboardRoutes,
  ];
}
