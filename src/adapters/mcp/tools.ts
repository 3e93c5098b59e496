/**
 * The MCP tools (DESIGN section 6): the same commands, the same strict schemas
 * and the same error envelopes as the HTTP API, with the same result schemas as
 * the OpenAPI document (outputSchema).
 */
import { z } from 'zod';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { TASK_STATES } from '../../commands/messageFields';
import { oneMessageSchema, deliveryQuerySchema, markReadSchema, sendMessageSchema } from '../../commands/schemas';
import { deliveryLedgerSchema } from '../../application/deliveryResponseSchemas';
import { parseInput } from '../../commands/validation';
import { listQuerySchema } from '../../application/listQueryParser';
import { LIST_QUERY_DESCRIPTIONS } from '../../application/queryDescriptions';
import * as results from '../../application/responseSchemas';
import { sendLimitDescriptions } from '../../application/servedLimits';
import { checkedArguments, REPLAYED_META, WithMeta, type ToolDefinition } from './toolDefinition';

export type { ToolDefinition };
import { TASK_TOOLS } from './taskTools';

const noArguments = z.strictObject({});

/**
 * The task envelope as a model reads it: its keys and their forms in a few
 * words, not the nested JSON Schema (~2 KB) that zod generates. The server
 * still validates it strictly, and its errors name the field and the valid form.
 */
export const COMPACT_TASK_SCHEMA = {
  description: 'an A2A task (object or JSON-encoded); every key optional',
  type: ['object', 'string'],
  properties: {
    state: { type: 'string', description: `${TASK_STATES.join('|')} (A2A spellings such as input-required accepted)` },
    input: {
      type: 'object',
      description: '{parts: [{kind: "text", text} | {kind: "data", data: {}} | {kind: "file", file: {uri, mimeType?}}]}',
    },
    metadata: {
      type: 'object',
      description: '{sessionId?, relatedTickets?: [], relatedDiscussions?: [], parentTask?, priorComments?: [{url, commentId}]}',
    },
    expectedOutput: { type: 'object', description: '{shape: review|ticket|discussion|pr|free-form, locationHint?}' },
    budget: { type: 'object', description: '{deadline?: ISO date-time, maxTokens?: positive integer or its digits}' },
    expiresAt: { type: 'string', format: 'date-time' },
  },
  additionalProperties: false,
};

/** Reads nothing but views: safe to call any number of times. */
const READ: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
/** Reads, and records that the messages were returned to you (seen marks: nothing you could undo or repeat differently). */
const SEES: ToolAnnotations = { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false };

export const TOOLS: ToolDefinition[] = [
  {
    name: 'add_message',
    command: 'send',
    description:
      'Send a message to @<identity>, to a list of identities (["@b", "@c"]: one message and thread), or AGENT:* alone ' +
      '(broadcast to every other active agent). You are the sender (from your token). Pass idempotencyKey to make a retry safe.',
    schema: sendMessageSchema,
    output: results.sendResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    limitDescriptions: sendLimitDescriptions,
    propertySchemas: { task: COMPACT_TASK_SCHEMA },
    run: async (api, args) => {
      const { result, replayed } = await api.sendOutcome(args);
      return replayed ? new WithMeta(result, { [REPLAYED_META]: true }) : result;
    },
  },
  {
    name: 'list_messages',
    description:
      "List your inbox (default) or outbox, newest first, with nextCursor and unreadCount (your whole inbox's, " +
      'whatever the box and filters). A message returned to you is marked seen (not read); seenAt shows when it was first returned.',
    schema: listQuerySchema,
    output: results.messagePageSchema,
    annotations: SEES,
    propertyDescriptions: LIST_QUERY_DESCRIPTIONS,
    encodedForm: 'comma-separated or JSON-encoded',
    run: (api, args) => api.listMessages(checkedArguments(listQuerySchema, args, 'list_messages')),
  },
  {
    name: 'get_message',
    description: 'Read one message with its body (you must be its sender or a recipient). Marks it seen for you, not read.',
    schema: oneMessageSchema,
    output: results.messageDetailSchema,
    annotations: SEES,
    run: (api, args) => api.getMessage(parseInput(oneMessageSchema, args ?? {}, 'get_message').messageId),
  },
  {
    name: 'get_delivery',
    description:
      'The delivery ledger of a message you sent: per recipient whether it is in view, was woken, seen, read, replied, ' +
      'with a count per stage (summary). Paged by recipient: pass nextAfter as after.',
    schema: deliveryQuerySchema,
    output: deliveryLedgerSchema,
    annotations: READ,
    run: (api, args) => api.getDelivery(checkedArguments(deliveryQuerySchema, args, 'get_delivery')),
  },
  {
    name: 'mark_read',
    command: 'mark_read',
    description:
      'Mark messages read for you: exactly one of messageId, messageIds, or all: true. all marks your unread messages ' +
      'that you have seen (listed or opened), narrowed by threadId, from, priority, before; unseen ones are withheld ' +
      'and counted (withheldUnseenCount) unless includeUnseen. Idempotent: a message already read keeps its first readAt.',
    schema: markReadSchema,
    output: results.markReadResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (api, args) => api.markRead(args ?? {}),
  },
  {
    name: 'archive_message',
    command: 'archive',
    description: 'Archive a message for you only: it leaves your inbox and counts; other recipients are unaffected.',
    schema: oneMessageSchema,
    output: results.archiveResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (api, args) => api.archive(parseInput(oneMessageSchema, args ?? {}, 'archive_message').messageId),
  },
  {
    name: 'unarchive_message',
    command: 'unarchive',
    description:
      'Bring a message you archived back to your inbox (unread again if you never read it). ' +
      'list_messages with status "archived" shows what you archived.',
    schema: oneMessageSchema,
    output: results.unarchiveResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (api, args) => api.unarchive(parseInput(oneMessageSchema, args ?? {}, 'unarchive_message').messageId),
  },
  {
    name: 'list_agents',
    description:
      'List the registered identities (identity, role, registeredAt, retired): only role agent, not retired, reads mail.',
    schema: noArguments,
    output: results.agentListSchema,
    annotations: READ,
    run: (api, args) => {
      parseInput(noArguments, args ?? {}, 'list_agents');
      return api.listAgents();
    },
  },
  {
    name: 'unread_count',
    description: 'Your unread count (unreadCount), total and by priority.',
    schema: noArguments,
    output: results.inboxCountSchema,
    annotations: READ,
    run: (api, args) => {
      parseInput(noArguments, args ?? {}, 'unread_count');
      return api.unreadCount();
    },
  },
  ...TASK_TOOLS,
];
