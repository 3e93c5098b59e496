/** One strict zod schema per command input (DESIGN section 3); the HTTP and MCP surfaces reuse them. */
import { z } from 'zod';
import { ROLES } from './roles';
import { IDENTITY_PATTERN } from './recipients';
import { jsonOrValue, prioritySchema, tagsSchema, taskEnvelopeSchema } from './messageFields';

export const MAX_SUBJECT_CHARS = 200;
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

export const messageIdSchema = z.uuid({ message: 'a message id is a UUID, as returned by a send' });

export const identitySchema = z.string().regex(IDENTITY_PATTERN, {
  message: 'an identity is @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt)',
});

export const sendMessageSchema = z.strictObject({
  // The recipient's shape is checked by the decider, which can add near-match suggestions.
  to: z.string({ message: "'to' is required: AGENT:* or @<identifier>" }),
  subject: z.string().min(1).max(MAX_SUBJECT_CHARS),
  body: z.string(),
  priority: prioritySchema.default('normal'),
  inReplyTo: messageIdSchema.optional(),
  threadId: z.string().min(1).max(200).optional(),
  tags: jsonOrValue(tagsSchema, 'tags').default([]),
  wakeSuppressed: z.boolean().default(false),
  task: jsonOrValue(taskEnvelopeSchema, 'task').optional(),
  idempotencyKey: z.string().min(1).max(MAX_IDEMPOTENCY_KEY_CHARS).optional(),
});
export type SendMessageInput = z.output<typeof sendMessageSchema>;

/** One id, or many: an array or its JSON encoding (lossless-permissive). */
export const MAX_BULK_IDS = 500;
export const markReadSchema = z.strictObject({
  messageId: messageIdSchema.optional(),
  messageIds: jsonOrValue(z.array(messageIdSchema).min(1).max(MAX_BULK_IDS), 'messageIds').optional(),
}).refine((input) => (input.messageId === undefined) !== (input.messageIds === undefined), {
  message: 'give exactly one of messageId (one id) or messageIds (an array of ids, or its JSON encoding)',
});
export type MarkReadInput = z.output<typeof markReadSchema>;

export const archiveSchema = z.strictObject({ messageId: messageIdSchema });

export const registerAgentSchema = z.strictObject({
  identity: identitySchema,
  role: z.enum(ROLES).exclude(['admin']).default('agent'),
});
export type RegisterAgentInput = z.output<typeof registerAgentSchema>;

export const retireAgentSchema = z.strictObject({ identity: identitySchema });
