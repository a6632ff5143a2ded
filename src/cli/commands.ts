import type { CliCommand } from './registry';

/** Every admin command; each component contributes its own list. */
export function allCommands(): CliCommand[] {
  return [];
}
