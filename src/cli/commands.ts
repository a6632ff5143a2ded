import type { CliCommand } from './registry';
import { identityCommands } from '../identity/cli';
import { communityCommands } from '../communities/cli';
import { scoringCommands } from '../scoring/cli';
import { reputationCommands } from '../reputation/cli';
import { reportCommands } from '../reports/cli';

/** Every admin command; each component contributes its own list. */
export function allCommands(): CliCommand[] {
  return [...identityCommands, ...communityCommands, ...scoringCommands, ...reputationCommands, ...reportCommands];
}
