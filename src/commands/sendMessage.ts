/** SendMessage: one pure decider, (command, state) -> events | error. Atomic: all events or none. */
import { MailboxError } from '../errors';
import { canonicalThreadId } from '../events/threadIdCase';
import type { BroadcastDelivered, MessageEvent, MessageSent, ReplyRequested } from '../events/types';
import { fieldsChangedSince } from './idempotentRetry';
import { replyDueBy } from './replyDeadline';
import { taskDeadlinePassed } from './tasks/taskDeadlines';
import { openTaskSentHeld } from './tasks/taskOpening';
import { activeAgents, caseVariantsOf, type RegisteredAgent, type RegistryState } from './agentRegistry';
import type { Command, CommandWarning } from './command';
import type { MessageState } from './message';
import { inactiveRecipient, namedIdentities, parseRecipient, type Recipient } from './recipients';
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
  /** When inReplyTo names no message but an entry of a task's history the sender may read: that task (historyEntries.ts). */
  parentEntryOf?: string | null;
}

const knownIdentities = (registry: RegistryState): string[] => activeAgents(registry).map((a) => a.identity);

export function decideSendMessage(command: SendMessage, state: SendState, policy: SendPolicy): MessageEvent[] | MailboxError {
  const { input, messageId, requestHash } = command.data;
  const sender = command.metadata.actor.identity;

  // 1. A retried Idempotency-Key returns the original result and writes nothing.
  if (state.message.sent) {
    if (state.message.sent.requestHash === requestHash) return [];
    const changed = fieldsChangedSince(state.message.sent, state.message.replyDueBy, input);
    const what =
      changed.length > 0
        ? `this request's ${listed(changed)} ${changed.length === 1 ? 'differs' : 'differ'} from that message's`
        : 'this request differs';
    return new MailboxError(
      'IDEMPOTENCY_KEY_REUSED',
      'Idempotency key reused',
      // Said as no surface's field: HTTP's header, MCP's idempotencyKey and the CLI's --idempotency-key all meet it.
      `The idempotency key '${input.idempotencyKey}' was already used for a different message (${what}); use a new key ` +
        'for a new message, or send the first request unchanged to get its result again.',
      { idempotencyKey: input.idempotencyKey, messageId, changedFields: changed },
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

  // 3. Recipient existence (layer 2, opt-in) and wake rules; a list's entries are each addressed as a direct message.
  if (recipient.kind !== 'broadcast') {
    const named = namedIdentities(recipient);
    // A case variant of a registered identity can never be registered: refused in every mode, never re-cased.
    for (const identity of named) {
      if (state.registry.agents.has(identity)) continue;
      const variants = caseVariantsOf(identity, state.registry);
      if (variants.length > 0) return caseVariantRecipient(input.to, recipient, identity, variants, state.registry);
    }
    for (let index = 0; index < named.length && policy.strictRecipients; index++) {
      const identity = named[index];
      const known = state.registry.agents.get(identity);
      if (known && known.retiredAt === null && known.role === 'agent') continue;
      const nearMatches = closestIdentities(identity, knownIdentities(state.registry));
      const why = inactiveRecipient(identity, known, nearMatches, 'refused');
      const where = recipient.kind === 'list' ? ` (to[${input.to.indexOf(identity)}]; nothing was sent to any of the list)` : '';
      return new MailboxError(
        'UNKNOWN_RECIPIENT',
        'Unknown recipient',
        `This mailbox delivers only to active agents: ${why.sentence}${where}`,
        {
          to: input.to,
          ...(recipient.kind === 'list' ? { index: input.to.indexOf(identity), entry: identity } : {}),
          ...(why.suggestions.length ? { suggestions: why.suggestions } : {}),
        },
      );
    }
    if (input.wakeSuppressed && (input.priority === 'high' || input.task !== undefined)) return wakeOwed(input);
  }

  // 4. Threading: a reply inherits its parent's thread; the caller must be part of that conversation.
  let threadId = input.threadId ?? messageId;
  if (input.inReplyTo !== undefined) {
    const parent = state.parent?.sent;
    // One answer for a missing parent and one the sender is not party to: ids are no existence oracle.
    if (!parent && state.parentEntryOf) {
      const taskId = state.parentEntryOf;
      return new MailboxError(
        'MESSAGE_NOT_FOUND',
        'Message not found',
        `inReplyTo names ${input.inReplyTo}, which is no message: it is an entry of the history of task ${taskId} ` +
          `(get_task's history[].messageId). To write in that task's thread (and answer its question, when you sent it ` +
          `and write to its holder), reply to the task's message: inReplyTo "${taskId}".`,
        { field: 'inReplyTo', messageId: input.inReplyTo, taskId },
      );
    }
    if (!parent || !state.parent || (parent.from !== sender && !state.parent.recipients.has(sender))) {
      return new MailboxError(
        'MESSAGE_NOT_FOUND',
        'Message not found',
        `inReplyTo names message ${input.inReplyTo}, which is not among the messages you sent or received; reply to one of those.`,
        { field: 'inReplyTo', messageId: input.inReplyTo },
      );
    }
    // A parent of an older log may hold its message-id thread as typed (upper case): its canonical form is its thread.
    const parentThread = canonicalThreadId(parent.threadId);
    if (input.threadId !== undefined && input.threadId !== parentThread) {
      return new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        `threadId '${input.threadId}' contradicts the thread of inReplyTo (${parentThread}); omit threadId to inherit it.`,
        { field: 'threadId' },
      );
    }
    threadId = parentThread;
  }

  // 5. Audience: the named identities (a list's once each), or for a broadcast a snapshot of active agents now, less the sender.
  const recipients =
    recipient.kind === 'broadcast'
      ? knownIdentities(state.registry).filter((identity) => identity !== sender)
      : namedIdentities(recipient);

  // A broadcast's audience is taken now: a task sent to nobody could never be claimed, by anyone registered later either.
  if (recipient.kind === 'broadcast' && recipients.length === 0 && input.task !== undefined) {
    return new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      'AGENT:* reaches the other agents active at the send, and no other agent is active now: nobody could ever ' +
        'claim this task (agents registered later are not its audience). Send it once an agent is registered ' +
        '(list_agents, GET /v1/agents, lists them), or to an identity. Nothing was sent.',
      { field: 'to', to: input.to },
    );
  }

  // The event data are built as whole literals, in the order the log stores them, never as {...summary, more}:
  // V8 gives every object made by a spread followed by more properties a hidden class of its own (issue 15:
  // ~800 bytes each, 10,000 of them in the stream-state cache of a server under load; a plain literal shares one).
  const inReplyTo = input.inReplyTo ?? null;
  const hasTask = input.task !== undefined;
  const to = storedAddressee(recipient);
  const sentAt = command.metadata.at;
  const sent: MessageSent = {
    type: 'MessageSent',
    data: {
      messageId,
      from: sender,
      to,
      subject: input.subject,
      priority: input.priority,
      threadId,
      inReplyTo,
      tags: input.tags,
      sentAt,
      wakeSuppressed: input.wakeSuppressed,
      hasTask,
      body: input.body,
      task: input.task ?? null,
      recipients,
      idempotencyKey: input.idempotencyKey ?? null,
      requestHash,
    },
  };
  // 6. A reply obligation (issue 13), due at a time after the send: its own event, beside the MessageSent.
  const requested: ReplyRequested[] = [];
  if (input.expectsReplyBy !== undefined) {
    const dueBy = replyDueBy(input.expectsReplyBy, command.metadata.at);
    if (dueBy instanceof MailboxError) return dueBy;
    requested.push({ type: 'ReplyRequested', data: { messageId, dueBy } });
  }
  // 7. A task must not be over before it arrives: its expiresAt and budget.deadline fall after the send.
  const passed = input.task === undefined ? null : taskDeadlinePassed(input.task, sentAt);
  if (passed) return passed;
  // 8. A list's or a broadcast's task is nobody's until claimed: it cannot open at a step only a holder is at.
  const held = input.task === undefined ? null : openTaskSentHeld(input.task, to);
  if (held) return held;
  // A direct message and a list are delivered by the MessageSent itself (one append however many are listed);
  // a broadcast's audience gets one BroadcastDelivered each.
  if (recipient.kind !== 'broadcast') return [sent, ...requested];
  const deliveries: BroadcastDelivered[] = recipients.map((identity) => ({
    type: 'BroadcastDelivered',
    data: {
      messageId,
      from: sender,
      to,
      subject: input.subject,
      priority: input.priority,
      threadId,
      inReplyTo,
      tags: input.tags,
      sentAt,
      wakeSuppressed: input.wakeSuppressed,
      hasTask,
      recipient: identity,
      deliveredAt: sentAt,
    },
  }));
  return [sent, ...deliveries, ...requested];
}

/** UNKNOWN_RECIPIENT for `identity`, which differs only in case from the registered `variants`. */
function caseVariantRecipient(
  to: SendMessageInput['to'],
  recipient: Recipient,
  identity: string,
  variants: readonly RegisteredAgent[],
  registry: RegistryState,
): MailboxError {
  const active = variants.filter((v) => v.retiredAt === null && v.role === 'agent').map((v) => v.identity);
  const described = variants.map((v) =>
    v.retiredAt !== null ? `${v.identity} (retired)` : v.role === 'agent' ? v.identity : `${v.identity} (an ${v.role}, no inbox)`,
  );
  const suggestions = active.length > 0 ? active : closestIdentities(identity, knownIdentities(registry));
  const index = Array.isArray(to) ? to.indexOf(identity) : -1;
  const where = index >= 0 ? ` to any of the list (to[${index}])` : '';
  return new MailboxError(
    'UNKNOWN_RECIPIENT',
    'Unknown recipient',
    `${identity} is not registered, and never can be: ${described.join(' and ')} ${variants.length > 1 ? 'are' : 'is'}, ` +
      `which differs only in case (identities are case-sensitive, and none is registered beside one that differs ` +
      `from it only in case). ` +
      (active.length > 0 ? `Did you mean ${active.join(' or ')}? ` : 'list_agents (GET /v1/agents) lists the agents. ') +
      `Nothing was sent${where}.`,
    {
      to,
      ...(recipient.kind === 'list' ? { index, entry: identity } : {}),
      ...(suggestions.length ? { suggestions } : {}),
    },
  );
}

/**
 * wakeSuppressed on a send its named recipients must be woken for (high priority, a task). The refusal said only "its
 * recipients must be woken": it now says how to send it either way, woken or (as the broadcast, which may be quiet)
 * waking nobody. 'wakeSuppressed' is quoted: the CLI says it as its flag (flagTerms.ts).
 */
function wakeOwed(input: SendMessageInput): MailboxError {
  const task = input.task !== undefined;
  const what = task
    ? `a${input.priority === 'high' ? ' high-priority' : ''} task sent to named identities: its recipients are woken to claim it`
    : 'a high-priority message to named identities: high priority wakes each recipient';
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `'wakeSuppressed' is refused for ${what}. Drop 'wakeSuppressed' to send it woken` +
      (task
        ? '; if waking nobody is meant'
        : ', or send it normal or low priority to deliver it without a wake; to keep it high and wake nobody') +
      ', send it to the broadcast AGENT:*, which may suppress its wakes (it reaches every other active agent, not only ' +
      'those named). Nothing was sent.',
    { field: 'wakeSuppressed' },
  );
}

/** 'a', 'a and b', 'a, b and c'. */
const listed = (words: string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

/** `to` as the log keeps it: the identity, AGENT:*, or the list's identities once each. */
const storedAddressee = (recipient: Recipient): string | string[] =>
  recipient.kind === 'broadcast' ? 'AGENT:*' : recipient.kind === 'direct' ? recipient.identity : recipient.identities;

/**
 * `tags` sent as one text holding spaces and no comma ("review urgent"): kept as sent, one tag (a tag may hold a space),
 * and said, since a model that wrote it most likely meant several (found: its `tags: "review"` filter then matched nothing).
 */
export function spacedTagWarnings(tags: unknown): CommandWarning[] {
  if (typeof tags !== 'string') return [];
  const tag = tags.trim();
  if (tag.startsWith('[') || tag.includes(',') || !/\s/.test(tag)) return [];
  const meant = tag.split(/\s+/);
  return [
    {
      code: 'SPACE_IN_TAG',
      message:
        `tags ${JSON.stringify(tags)} was kept as one tag, ${JSON.stringify(tag)}: tags are separated by commas ` +
        `(${JSON.stringify(meant.join(', '))}) or given as a list (${JSON.stringify(meant)}).`,
      tag,
    },
  ];
}

/**
 * A message its sender is a recipient of (`@a` to `@a`, or `@a` in its own list): delivered as sent (a note to oneself
 * is a use) and said, since an agent that meant another (a copied identity, its own name in a reply's `to`) was told
 * nothing, and the one it meant waited. The broadcast leaves its sender out, so never says it.
 */
export function selfAddressedWarnings(from: string, recipients: readonly string[]): CommandWarning[] {
  if (!recipients.includes(from)) return [];
  return [
    {
      code: 'SELF_ADDRESSED',
      message:
        `You sent this message to yourself (${from}): it is in your own inbox, as any recipient gets it. If you meant ` +
        'another agent, send it again to its identity (list_agents or GET /v1/agents names them).',
      identity: from,
    },
  ];
}

/**
 * Non-blocking hints on an accepted send: a named recipient that is not an active agent (permissive
 * mode only: strict mode refused the send), and each repeated entry of a list (delivered once).
 */
export function sendWarnings(input: SendMessageInput, registry: RegistryState, strictRecipients = false): CommandWarning[] {
  const recipient = parseRecipient(input.to);
  if (recipient instanceof MailboxError) return [];
  const warnings: CommandWarning[] = [];
  if (recipient.kind === 'list') {
    for (const { index, identity } of recipient.repeated) {
      warnings.push({
        code: 'DUPLICATE_RECIPIENT',
        message: `${identity} is listed more than once (again at to[${index}]); it was delivered once.`,
        identity,
        index,
      });
    }
  }
  if (strictRecipients) return warnings;
  for (const identity of namedIdentities(recipient)) {
    const known = registry.agents.get(identity);
    if (known && known.retiredAt === null && known.role === 'agent') continue;
    const { code, sentence, suggestions } = inactiveRecipient(
      identity,
      known,
      closestIdentities(identity, knownIdentities(registry)),
      'stored',
    );
    warnings.push({
      code,
      message: `The message is stored, but ${sentence}`,
      // Named in every form of `to`: a client reads which recipient a warning is about from the same field whether it
      // sent to one identity or a list.
      identity,
      ...(suggestions.length ? { suggestions } : {}),
    });
  }
  return warnings;
}

/**
 * A broadcast that reached nobody (no other agent active at the send): stored, kept for audit, and said, since its
 * sender was answered as for any other and agents registered later never get it (its audience is taken at the send).
 */
export function emptyAudienceWarnings(sent: { to: string | string[]; recipients: readonly string[] }): CommandWarning[] {
  if (sent.to !== 'AGENT:*' || sent.recipients.length > 0) return [];
  return [
    {
      code: 'NO_AUDIENCE',
      message:
        'The broadcast is stored, but no other agent is active now, so nobody received it; agents registered later do ' +
        'not get it (a broadcast reaches the agents active when it is sent). list_agents (GET /v1/agents) lists them.',
    },
  ];
}
