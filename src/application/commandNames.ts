/**
 * The name of each command as /metrics (mailbox_commands_total's `command` label) and the rejection log
 * (GET /v1/audit/rejections) give it, the same on every surface: an HTTP route and the MCP tool doing one
 * command are one series apart only by `surface`. The task commands are named as their MCP tools and the
 * library's claimTask/updateTask are.
 */
export const COMMAND_NAMES = [
  'register_agent',
  'retire_agent',
  'rotate_agent_token',
  'send',
  'mark_read',
  'archive',
  'unarchive',
  'claim_task',
  'update_task',
] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];

export const isCommandName = (name: string): name is CommandName => (COMMAND_NAMES as readonly string[]).includes(name);

export type Surface = 'http' | 'mcp';
