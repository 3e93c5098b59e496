/** `mailbox heartbeat ...` subcommands (filled in by the issue that owns them). */
import type { Command } from 'commander';

export function registerHeartbeatCommands(_program: Command): void {
  // Registered here once implemented.
}
