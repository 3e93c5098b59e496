/** SendMessage: one pure decider, (command, state) -> events | error. Atomic: all events or none. */
import { MailboxError } from '../errors';
import type { BroadcastDelivered, MessageEvent, MessageSent } from '../events/types';
import { activeAgents, type RegistryState } from './agentRegistry';
import type { Command } from './command';
import type { MessageState } from './message';
import { inactiveRecipient, parseRecipient } from './recipients';
import type { SendMessageInput } from './schemas';
import { closestIdentities } from './suggestions';

export type SendMessage = Command<
  'SendMessage',
  {
    messageId: string;
    input: SendMessageInput;
    requestHash: string;
  }
>;

export interface SendPolicy {
  maxBodyBytes: number;
  strictRecipients: boolean;
}

export interface SendState {
  message: MessageState; // this message's own stream: non-empty when an Idempotency-Key is retried
  registry: RegistryState;
  parent: MessageState | null; // the inReplyTo message, when given
}

const knownIdentities = (registry: RegistryState): string[] => activeAgents(registry).map((a) => a.identity);

export function decideSendMessage(command: SendMessage, state: SendState, policy: SendPolicy): MessageEvent[] | MailboxError {
  const { input, messageId, requestHash } = command.data;
  const sender = command.metadata.actor.identity;

  // 1. A retried Idempotency-Key returns the original result and writes nothing.
  if (state.message.sent) {
    if (state.message.sent.requestHash === requestHash) return [];
    return new MailboxError(
      'IDEMPOTENCY_KEY_REUSED',
      'Idempotency key reused',
      `Idempotency-Key '${input.idempotencyKey}' was already used for a different message; use a new key for a new message.`,
      { idempotencyKey: input.idempotencyKey, messageId },
    );
  }
  // 2. Size and shape, before anything else is looked at.
  const bodyBytes = Buffer.byteLength(input.body, 'utf8');
  if (bodyBytes > policy.maxBodyBytes) {
    return new MailboxError(
      'PAYLOAD_TOO_LARGE',
      'Payload too large',
      `The body is ${bodyBytes} bytes; the limit is ${policy.maxBodyBytes} bytes. Shorten it or link to the content.`,
      { field: 'body', bytes: bodyBytes, limit: policy.maxBodyBytes },
    );
  }
  const recipient = parseRecipient(input.to, () => knownIdentities(state.registry));
  if (recipient instanceof MailboxError) return recipient;

  // 3. Recipient existence (layer 2, opt-in) and wake rules.
  if (recipient.kind === 'direct') {
    const known = state.registry.agents.get(recipient.identity);
    if (policy.strictRecipients && (!known || known.retiredAt !== null || known.role !== 'agent')) {
      const nearMatches = closestIdentities(recipient.identity, knownIdentities(state.registry));
      const why = inactiveRecipient(recipient.identity, known, nearMatches, 'refused');
      return new MailboxError(
        'UNKNOWN_RECIPIENT',
        'Unknown recipient',
        `This mailbox delivers only to active agents: ${why.sentence}`,
        { to: input.to, ...(why.suggestions.length ? { suggestions: why.suggestions } : {}) },
      );
    }
    if (input.wakeSuppressed && (input.priority === 'high' || input.task !== undefined)) {
      return new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        'wakeSuppressed is refused for a direct message that is high priority or carries a task: its recipient must be woken.',
        { field: 'wakeSuppressed' },
      );
    }
  }

  // 4. Threading: a reply inherits its parent's thread; the caller must be part of that conversation.
  let threadId = input.threadId ?? messageId;
  if (input.inReplyTo !== undefined) {
    const parent = state.parent?.sent;
    // One answer for a missing parent and one the sender is not party to: ids are no existence oracle.
    if (!parent || !state.parent || (parent.from !== sender && !state.parent.recipients.has(sender))) {
      return new MailboxError(
        'MESSAGE_NOT_FOUND',
        'Message not found',
        `inReplyTo names message ${input.inReplyTo}, which is not among the messages you sent or received; reply to one of those.`,
        { field: 'inReplyTo', messageId: input.inReplyTo },
      );
    }
    if (input.threadId !== undefined && input.threadId !== parent.threadId) {
      return new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        `threadId '${input.threadId}' contradicts the thread of inReplyTo (${parent.threadId}); omit threadId to inherit it.`,
        { field: 'threadId' },
      );
    }
    threadId = parent.threadId;
  }

  // 5. Audience: a snapshot of active agents now, excluding the sender.
  const recipients =
    recipient.kind === 'direct'
      ? [recipient.identity]
      : knownIdentities(state.registry).filter((identity) => identity !== sender);

  const summary = {
    messageId,
    from: sender,
    to: input.to,
    subject: input.subject,
    priority: input.priority,
    threadId,
    inReplyTo: input.inReplyTo ?? null,
    tags: input.tags,
    sentAt: command.metadata.at,
    wakeSuppressed: input.wakeSuppressed,
    hasTask: input.task !== undefined,
  };
  const sent: MessageSent = {
    type: 'MessageSent',
    data: {
      ...summary,
      body: input.body,
      task: input.task ?? null,
      recipients,
      idempotencyKey: input.idempotencyKey ?? null,
      requestHash,
    },
  };
  if (recipient.kind === 'direct') return [sent];
  const deliveries: BroadcastDelivered[] = recipients.map((identity) => ({
    type: 'BroadcastDelivered',
    data: { ...summary, recipient: identity, deliveredAt: command.metadata.at },
  }));
  return [sent, ...deliveries];
}

/** Non-blocking hints on an accepted send (permissive mode): a direct recipient that is not an active agent. */
export function sendWarnings(input: SendMessageInput, registry: RegistryState): Array<Record<string, unknown>> {
  if (input.to.startsWith('AGENT:')) return [];
  const known = registry.agents.get(input.to);
  if (known && known.retiredAt === null && known.role === 'agent') return [];
  const { code, sentence, suggestions } = inactiveRecipient(
    input.to,
    known,
    closestIdentities(input.to, knownIdentities(registry)),
    'stored',
  );
  return [{ code, message: `The message is stored, but ${sentence}`, ...(suggestions.length ? { suggestions } : {}) }];
}
