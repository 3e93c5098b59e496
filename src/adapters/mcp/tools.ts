/**
 * The MCP tools (DESIGN section 6): the same commands, the same strict schemas
 * and the same error envelopes as the HTTP API.
 */
import { z } from 'zod';
import { archiveSchema, markReadSchema, sendMessageSchema } from '../../commands/schemas';
import { parseInput } from '../../commands/validation';
import { listQuerySchema } from '../../application/listQueryParser';
import type { AgentApi } from '../../application/agentApi';

export interface ToolDefinition {
  name: string;
  description: string;
  schema: z.ZodType;
  /** How a string may stand in for a structured field of this tool's input (for the advertised schema). */
  encodedForm?: string;
  run(api: AgentApi, args: unknown): Promise<object>;
}

const noArguments = z.strictObject({});

export const TOOLS: ToolDefinition[] = [
  {
    name: 'add_message',
    description: 'Send a message. `to` is either @<identity> (a direct message, e.g. @neo-gpt) or the literal AGENT:* ' +
      '(a broadcast to every other registered agent); nothing else is accepted. Your identity comes from your token. ' +
      'Pass idempotencyKey to make a retry safe.',
    schema: sendMessageSchema,
    run: (api, args) => api.send(args),
  },
  {
    name: 'list_messages',
    description: 'List your inbox (default) or outbox (box: "outbox"), newest first, with unreadCount and a nextCursor for the next page. ' +
      'Inbox filters: status (unread|read|all), from, threadId, tags, priority; outbox filters: to, threadId, tags, priority.',
    schema: listQuerySchema,
    encodedForm: 'comma-separated values or a JSON-encoded array',
    run: (api, args) => api.listMessages(args ?? {}),
  },
  {
    name: 'get_message',
    description: 'Read one message with its body (you must be its sender or a recipient). Does not mark it read.',
    schema: archiveSchema,
    run: (api, args) => api.getMessage(parseInput(archiveSchema, args ?? {}, 'get_message').messageId),
  },
  {
    name: 'mark_read',
    description: 'Mark messages read for you: {messageId} for one, or {messageIds} as an array or a JSON-encoded array string. ' +
      'Idempotent: a message already read keeps its first readAt.',
    schema: markReadSchema,
    run: (api, args) => api.markRead(args ?? {}),
  },
  {
    name: 'archive_message',
    description: 'Archive a message for you only: it leaves your inbox and counts; other recipients are unaffected.',
    schema: archiveSchema,
    run: (api, args) => api.archive(parseInput(archiveSchema, args ?? {}, 'archive_message').messageId),
  },
  {
    name: 'list_agents',
    description: 'List the registered agents (identity, role, registeredAt, retired): who you can write to.',
    schema: noArguments,
    run: (api, args) => {
      parseInput(noArguments, args ?? {}, 'list_agents');
      return api.listAgents();
    },
  },
  {
    name: 'unread_count',
    description: 'Your unread count, total and by priority.',
    schema: noArguments,
    run: (api, args) => {
      parseInput(noArguments, args ?? {}, 'unread_count');
      return api.unreadCount();
    },
  },
];
