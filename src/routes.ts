import type { RouteDef } from './http/route';
import { healthRoutes } from './health/routes';
import { metaRoutes } from './meta/routes';
import { identityRoutes } from './identity/routes';
import { ownerRoutes } from './owners/routes';
import { connectRoutes } from './connect/routes';
import { claimRoutes } from './claim/routes';

/**
 * Every API route of the service, in one list: the router mounts it and the OpenAPI document
 * is generated from it. Each business component exports its own routes.
 */
export function apiRoutes(): RouteDef[] {
  return [...healthRoutes, ...metaRoutes(apiRoutes), ...identityRoutes, ...ownerRoutes, ...connectRoutes, ...claimRoutes];
}
