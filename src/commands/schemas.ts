/** One strict zod schema per command input (DESIGN section 3); the HTTP and MCP surfaces reuse them. */
import { z } from 'zod';
import { pageSize } from './numberFields';
import { receivedOf } from './teachingMessages';
import { ROLES } from './roles';
import { identityFault, IDENTITY_PATTERN, MAX_LIST_RECIPIENTS, withoutWrapping } from './recipients';
import { MAX_TAGS, prioritySchema, TAG_SHORT_FORM, tagListSchema, taskEnvelopeSchema } from './messageFields';
import { expectsReplyBySchema } from './replyDeadline';
import { readableText } from './readableText';
import { THREAD_ID_SHORT_FORM, threadIdSchema } from './threadIds';
import { MAX_TASK_BYTES, withinJsonBytes } from './jsonSize';
import { messageId, messageIdSchema } from './messageIds';
import { shownValue } from './shownValue';
import { encodedOr } from './encodedJson';
import { PRINTABLE_REFUSED, printableText } from './printableText';

export const MAX_SUBJECT_CHARS = 200;
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

export { messageIdSchema };

export const IDENTITY_FORM = 'must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt)';

/**
 * The identity refused, and the one meant when it lacks only its @ ("alice" for @alice, as a send's `to` is told): a
 * filter `from: "alice"` was told the form alone.
 */
export function identityRefused(input: unknown): string {
  if (typeof input !== 'string') return '';
  const unwrapped = withoutWrapping(input);
  const meant =
    unwrapped !== null && IDENTITY_PATTERN.test(unwrapped)
      ? `: did you mean "${unwrapped}"? (an identity is written alone, without quotes or brackets around it)`
      : IDENTITY_PATTERN.test(`@${input}`)
        ? `: did you mean "@${input}"? (the @ is part of the identity)`
        : '';
  const fault = identityFault(input);
  return `; ${shownValue(input)} is not one${fault ? `: ${fault}` : meant}`;
}

export const identitySchema = z.string().regex(IDENTITY_PATTERN, {
  error: (issue) => `${IDENTITY_FORM}${identityRefused(issue.input)}`,
});

// Properties are described here once, for the OpenAPI document and the MCP tools alike.
export const RECIPIENT_JSON_PATTERN = '^(AGENT:\\*|@[A-Za-z0-9_-]{1,64})$';

export const IDENTITY_JSON_PATTERN = '^@[A-Za-z0-9_-]{1,64}$';

/**
 * `to`: one recipient, or a list of identities (or that list JSON-encoded as one string: lossless-permissive).
 * Shapes are checked by the decider, which names the index of a wrong entry and adds near-match suggestions;
 * the patterns are advertised only, so that every wrong shape gets that one teaching error.
 */
const recipientsSchema = z.preprocess(
  (value) => {
    if (typeof value !== 'string' || !value.trimStart().startsWith('[')) return value;
    try {
      const decoded: unknown = JSON.parse(value);
      return Array.isArray(decoded) ? decoded : value;
    } catch {
      return value; // not JSON: the decider's shape error teaches the forms
    }
  },
  z.union(
    [
      z.string().meta({ pattern: RECIPIENT_JSON_PATTERN }),
      z
        .array(z.unknown().meta({ type: 'string', pattern: IDENTITY_JSON_PATTERN }))
        .meta({ minItems: 1, maxItems: MAX_LIST_RECIPIENTS }),
    ],
    {
      error: (issue) =>
        `${issue.input === undefined ? 'is required' : `must be text or a list, not ${receivedOf(issue.input)}`}: ` +
        'AGENT:*, @<identifier>, or a list of identities such as ["@b", "@c"]',
    },
  ),
);

export const sendMessageSchema = z.strictObject({
  to: recipientsSchema.meta({
    description:
      '@<identity> for one agent (e.g. @neo-gpt), the literal AGENT:* to broadcast to every other active agent, or a list ' +
      `of 1-${MAX_LIST_RECIPIENTS} identities (["@b", "@c"]: one message, each recipient has its own copy). Not comma text.`,
  }),
  subject: readableText(
    MAX_SUBJECT_CHARS,
    'give a short summary of 1-200 characters, at least one of them visible (not whitespace)',
  ).describe('a short summary, 1-200 characters (not only whitespace or invisible characters), kept as sent'),
  body: z.string(), // described with its limit, the server's own, where a schema is served (application/servedLimits.ts)
  priority: prioritySchema
    .default('normal')
    .describe('default normal; high wakes each recipient, except AGENT:* with wakeSuppressed'),
  inReplyTo: messageIdSchema.optional().describe('the messageId you answer: the reply joins its thread (threadId is inherited)'),
  threadId: threadIdSchema
    .optional()
    .describe(`a thread to start or continue without answering one message (${THREAD_ID_SHORT_FORM}); omit with inReplyTo`),
  tags: tagListSchema.default([]).describe(`labels to filter on: at most ${MAX_TAGS}, each ${TAG_SHORT_FORM}`),
  wakeSuppressed: z.boolean().default(false).describe('true: no wake event; to @identities, refused if high priority or a task'),
  expectsReplyBy: expectsReplyBySchema.optional(),
  task: encodedOr('task', taskEnvelopeSchema.superRefine(withinJsonBytes('task')), {
    kind: 'object',
    what: 'an object (an A2A task envelope)',
    example: '{"state": "submitted"}',
  })
    .optional()
    .describe(
      `an A2A task: state, input.parts, metadata, expectedOutput, budget, expiresAt; at most ${MAX_TASK_BYTES / 1024} KiB ` +
        "as JSON (link to larger content: a file part's uri)",
    ),
  // Matched exactly, as a thread id: 'k1 ' (a key copied with a space) was another key than 'k1', so a retry sent the
  // message twice; and the Idempotency-Key header's value loses that space on the way (HTTP trims it), the body's kept it.
  idempotencyKey: printableText({
    noun: 'key',
    names: 'key',
    max: MAX_IDEMPOTENCY_KEY_CHARS,
    form: `1-${MAX_IDEMPOTENCY_KEY_CHARS} characters of printable text, e.g. "review-12" (${PRINTABLE_REFUSED})`,
  })
    .optional()
    .describe('a unique key per message: a retry with the same key returns the first result and sends nothing new'),
});
export type SendMessageInput = z.output<typeof sendMessageSchema>;

/** Filters of mark_read {all: true}; they narrow which unread messages are marked, and apply to nothing else. */
export const READ_ALL_FILTERS = ['threadId', 'from', 'priority', 'before', 'includeUnseen'] as const;

/** One id, many (an array or its JSON encoding: lossless-permissive), or all: exactly one of the three. */
export const MAX_BULK_IDS = 500;
const MARK_READ_CHOICES = ['messageId', 'messageIds', 'all'] as const;
export const markReadSchema = z
  .strictObject({
    messageId: messageId('takes one id; for several ids send messageIds: ["<id>", "<id>"] instead')
      .optional()
      .describe('one message id'),
    messageIds: encodedOr('messageIds', z.array(messageIdSchema).min(1).max(MAX_BULK_IDS), {
      kind: 'array',
      what: 'an array of message ids',
      example: '["<id>", "<id>"]',
      // One id given as text (a model's "messageIds": "<id>"): the two forms that take it.
      oneItem: {
        fits: (text) => messageIdSchema.safeParse(text).success,
        say: (text) => `for one id, send "messageId": ${JSON.stringify(text)}, or "messageIds": [${JSON.stringify(text)}]`,
      },
    })
      .optional()
      .describe(
        `several message ids (up to ${MAX_BULK_IDS}); one result per distinct id (a repeat: a DUPLICATE_MESSAGE_ID warning)`,
      ),
    all: z
      .literal(true, {
        error: (issue) =>
          `is true or absent: {all: true} marks your unread messages that were seen, not ${receivedOf(issue.input)}` +
          (issue.input === 'true' ? ': did you mean true, unquoted?' : ''),
      })
      .optional()
      .describe(
        'true: mark every unread message of yours that was seen (returned to you by a list or get), with the filters ' +
          'below; unseen ones are withheld and counted (withheldUnseenCount) unless includeUnseen',
      ),
    threadId: threadIdSchema.optional().describe('with all: only this thread'),
    from: identitySchema.optional().describe('with all: only from this sender'),
    priority: prioritySchema.optional().describe('with all: only this priority'),
    // No message of its own: teachingMessages.ts says which ISO form ("must be an ISO 8601 date and time with seconds...").
    before: z.iso.datetime({ offset: true }).optional().describe('with all: only messages sent before this time'),
    includeUnseen: z.boolean().optional().describe('with all: true marks unseen messages too'),
  })
  .superRefine((input, ctx) => {
    // The issue names a field (the error's `field`, never ""): messageId when none was given, else the one too many.
    const given = MARK_READ_CHOICES.filter((key) => input[key] !== undefined);
    const filters = READ_ALL_FILTERS.filter((key) => input[key] !== undefined);
    if (given.length === 0 && filters.length > 0) {
      // {"threadId": "x"} means "mark this thread read": it lacks only all (it was told messageId is required).
      ctx.addIssue({
        code: 'custom',
        path: ['all'],
        message:
          `is required with ${filters.map((key) => `'${key}'`).join(', ')}, which narrow${filters.length === 1 ? 's' : ''} ` +
          'mark_read {all: true}: add "all": true (your unread messages that you have seen), or name the messages with ' +
          'messageId or messageIds',
      });
      return;
    }
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: [given.length === 0 ? 'messageId' : given[1]],
        message:
          (given.length === 0 ? "(or 'messageIds', or 'all') is required: " : `cannot be combined with '${given[0]}': `) +
          'give exactly one of messageId (one id), messageIds (an array of ids, or its JSON encoding) or all: true ' +
          '(every unread message you have seen)',
      });
      return;
    }
    if (input.all === undefined && filters.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: [filters[0]],
        message: 'narrows mark_read {all: true} only; with messageId or messageIds name the messages instead',
      });
    }
  })
  .meta({ minProperties: 1, description: 'exactly one of messageId, messageIds or all (all takes the filters)' });
export type MarkReadInput = z.output<typeof markReadSchema>;

/** One message by its id: get, archive and unarchive a message; the CLI's read and audit message arguments. */
export const oneMessageSchema = z.strictObject({
  messageId: messageIdSchema.describe('the message id, as returned by a send or a list'),
});

export const registerAgentSchema = z.strictObject({
  identity: identitySchema,
  role: z.enum(ROLES).exclude(['admin']).default('agent'),
});
export type RegisterAgentInput = z.output<typeof registerAgentSchema>;

export const retireAgentSchema = z.strictObject({ identity: identitySchema });

/** The delivery ledger of one message (issue 13): recipients in identity order, paged after an identity. */
export const MAX_DELIVERY_PAGE = 1000;
export const deliveryQuerySchema = z.strictObject({
  messageId: messageIdSchema.describe('the message id, as returned by a send or a list'),
  after: identitySchema.optional().describe("the recipients after this identity: the previous page's nextAfter"),
  limit: pageSize(MAX_DELIVERY_PAGE, 100).describe(`recipients per page, 1-${MAX_DELIVERY_PAGE} (default 100)`),
});
