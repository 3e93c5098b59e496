/** `mailbox projections ...` subcommands (filled in by the issue that owns them). */
import type { Command } from 'commander';

export function registerProjectionsCommands(_program: Command): void {
  // Registered here once implemented.
}
