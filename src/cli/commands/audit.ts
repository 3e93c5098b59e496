/** `mailbox audit ...` subcommands (filled in by the issue that owns them). */
import type { Command } from 'commander';

export function registerAuditCommands(_program: Command): void {
  // Registered here once implemented.
}
