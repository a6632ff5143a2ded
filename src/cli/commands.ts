import type { CliCommand } from './registry';
import { identityCommands } from '../identity/cli';

/** Every admin command; each component contributes its own list. */
export function allCommands(): CliCommand[] {
  return [...identityCommands];
}
