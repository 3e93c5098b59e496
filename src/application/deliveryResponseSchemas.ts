/** What the delivery ledger answers (issue 13), as a zod schema (OpenAPI and MCP outputSchema), held to DeliveryLedger. */
import { z } from 'zod';
import { WAKE_VIAS } from '../events/storedShapes';
import { NO_WAKE_REASONS } from '../projections/readModel/ledger';
import type { DeliveryLedger } from './deliveryQueries';

const timestamp = z.string().describe('ISO 8601 time');
const count = z.number().int().min(0);

const deliveryRowSchema = z.object({
  recipient: z.string(),
  inView: z.object({ position: z.string() }).nullable().describe("in the recipient's inbox from this log position"),
  woken: z
    .object({ at: timestamp, via: z.enum(WAKE_VIAS) })
    .nullable()
    .describe('a wake reached it: handed to an open wake stream, or a heartbeat nudge delivered (webhook, hook, redis)'),
  seen: z.object({ at: timestamp }).nullable().describe('first returned to the recipient by a list or a get'),
  read: z.object({ at: timestamp }).nullable(),
  replied: z.object({ at: timestamp, messageId: z.uuid() }).nullable().describe('its first message in the thread after this one'),
});

export const deliveryLedgerSchema = z.object({
  messageId: z.uuid(),
  sender: z.string(),
  threadId: z.string(), // a message id, or a name the sender gave (threadIds.ts)
  sentAt: timestamp,
  accepted: z
    .object({ position: z.string().nullable() })
    .describe("the send's log position (null while the views have not applied it: see viewsLagging)"),
  wakeExpected: z
    .boolean()
    .describe(
      'false when no recipient was due a wake: suppressed, no recipient but its sender, or none was a registered agent (not retired) when it was sent. Only a message that expected a wake can be unwoken',
    ),
  noWakeReason: z
    .enum(NO_WAKE_REASONS)
    .optional()
    .describe(
      'only when wakeExpected is false, why: suppressed (wakeSuppressed), noRecipient (a broadcast with no peers), noRegisteredRecipient (sent to identities no agent was registered as, or retired: nobody could be woken)',
    ),
  escalatedAt: timestamp
    .nullable()
    .describe('when the heartbeat escalated it through the nudge targets, having woken nobody within the wake SLA'),
  replyDueBy: timestamp.nullable().describe("when every recipient's answer in the thread is due (expectsReplyBy)"),
  replyOverdueAt: timestamp.nullable().describe('when the heartbeat found it overdue and woke you with reply-overdue'),
  summary: z
    .object({ recipients: count, inView: count, woken: count, seen: count, read: count, replied: count })
    .describe('how many of all recipients reached each stage'),
  recipients: z.array(deliveryRowSchema).describe("this page's recipients, in identity order; a stage is null until reached"),
  nextAfter: z.string().nullable().describe('pass as `after` for the next page; null on the last'),
  viewsLagging: z.literal(true).optional().describe('the views have not applied the send yet: nothing beyond accepted is known'),
});

type Fits<Value, Schema extends z.ZodType> = Value extends z.input<Schema> ? true : never;
const fits = <T extends true>(): T => true as T;
void fits<Fits<DeliveryLedger, typeof deliveryLedgerSchema>>();
