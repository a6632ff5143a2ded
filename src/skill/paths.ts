/** Where the skill files are served (the discovery manifest links them). */
export const SKILL_PATHS = { skill: '/skill.md', heartbeat: '/heartbeat.md', llms: '/llms.txt' } as const;
