import Router from '@koa/router';
import type { AppContext } from '../http/route';
import type { Config } from '../config';
import { buildOpenApi } from '../http/openapi';
import { apiRoutes } from '../routes';
import { heartbeatMarkdown, llmsTxt, skillMarkdown } from './render';
import { SKILL_PATHS } from './paths';

interface SkillFiles {
  skill: string;
  heartbeat: string;
  llms: string;
}

const built = new WeakMap<Config, SkillFiles>();

/** The three files for this configuration's public URL, built once (they depend on nothing else). */
export function skillFiles(config: Config): SkillFiles {
  let files = built.get(config);
  if (!files) {
    const site = config.publicUrl;
    files = {
      skill: skillMarkdown(buildOpenApi(apiRoutes(), config), site, apiRoutes()),
      heartbeat: heartbeatMarkdown(site),
      llms: llmsTxt(site),
    };
    built.set(config, files);
  }
  return files;
}

/**
 * GET /skill.md, /heartbeat.md and /llms.txt: documents for agents, not API operations (so they
 * are not in the OpenAPI document, which they describe). Public, generated at first request.
 */
export function skillRouter(): Router {
  const router = new Router();
  const serve = (path: string, type: string, pick: (f: SkillFiles) => string) =>
    router.get(path, async (ctx: AppContext) => {
      ctx.status = 200;
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = pick(skillFiles(ctx.deps.config));
    });
  serve(SKILL_PATHS.skill, 'text/markdown; charset=utf-8', (f) => f.skill);
  serve(SKILL_PATHS.heartbeat, 'text/markdown; charset=utf-8', (f) => f.heartbeat);
  serve(SKILL_PATHS.llms, 'text/plain; charset=utf-8', (f) => f.llms);
  return router;
}
