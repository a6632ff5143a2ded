import type Router from '@koa/router';
import type { Deps } from '../deps';

/** Server-rendered pages for people (mounted after the API). */
export function webRouters(deps: Deps): Router[] {
  void deps;
  return [];
}
