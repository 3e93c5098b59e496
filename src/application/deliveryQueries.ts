/**
 * The delivery ledger of a message (issue 13), for its sender, auditors and
 * admins. Who may ask, and what others get: an agent that did not send the
 * message gets 403 FORBIDDEN whether or not the message exists (a recipient,
 * a stranger, a made-up id alike), so the answer is no existence oracle; only
 * auditors and admins, who may know every message, learn that an id is
 * unknown (404 MESSAGE_NOT_FOUND).
 */
import { inject, injectable } from 'tsyringe';
import { messageNotInLog } from '../commands/receipts';
import type { Actor } from '../commands/roles';
import { deliveryQuerySchema } from '../commands/schemas';
import { parseInput } from '../commands/validation';
import { MailboxError } from '../errors';
import type { EventStore } from '../events/eventStore';
import { messageStream } from '../events/streams';
import type { ProjectionStore } from '../projections/projectionStore';
import { isBroadcastAddress } from '../events/addressing';
import type { MessageSent } from '../events/types';
import type { DeliveryRow, LedgerCounts, NoWakeReason } from '../projections/readModel/ledger';
import { noWakeReason, wakeExpectedOf } from '../projections/readModel/ledgerRules';
import { TOKENS } from '../tokens';
import { historyEntryTask } from './historyEntries';
import { messageModel } from './mailboxCommands';
import { StreamLoader } from './streamLoader';

export interface DeliveryLedger {
  messageId: string;
  sender: string;
  threadId: string;
  sentAt: string;
  /** The send's log position: the `accepted` stage of every recipient (null: known from the log, not yet from the views). */
  accepted: { position: string | null };
  wakeExpected: boolean;
  /** Why no wake was due (only when wakeExpected is false): see NoWakeReason. */
  noWakeReason?: NoWakeReason;
  /** When the heartbeat escalated the message because it woke nobody within the wake SLA (null: never). */
  escalatedAt: string | null;
  /** When every recipient's reply is due (null: none expected), and when the heartbeat found it overdue (null: not). */
  replyDueBy: string | null;
  replyOverdueAt: string | null;
  /** How many recipients reached each stage (of all of them, not only this page's). */
  summary: { recipients: number } & LedgerCounts;
  /** This page's recipients, in identity order; a stage is null until reached. */
  recipients: DeliveryRow[];
  /** Pass as `after` for the next page; null on the last. */
  nextAfter: string | null;
  /** True when the views have not applied the send yet: every recipient is at `accepted` as far as they can tell. */
  viewsLagging?: true;
}

/** What of a send decides whether a wake is due to it (the projector's ledgerOpened fact). */
const sendWakes = (sent: MessageSent['data']) => ({
  recipients: sent.recipients,
  wakeSuppressed: sent.wakeSuppressed,
  broadcastSender: isBroadcastAddress(sent.to) ? sent.from : null,
});

const forbidden = (messageId: string) =>
  new MailboxError(
    'FORBIDDEN',
    'Forbidden',
    `Message ${messageId} is not among the messages you sent, and a delivery ledger is shown only to its sender, ` +
      'auditors and admins: check the id in your outbox (list_messages {"box": "outbox"}, GET /v1/messages?box=outbox).',
    { messageId },
  );

/**
 * The id of an entry of a task's history, to a party to that task or an overseer (found as a model: the entry that
 * answered a task, kept as an id, given to get_delivery was told to look in the outbox, where no such message is).
 * The code is the one any other unknown id gets (403 to an agent, 404 to an overseer); the message names the task, and
 * the ledger of the message that carried it to whoever may read that ledger.
 */
const historyEntryNoLedger = (messageId: string, taskId: string, ledgerIsTheirs: boolean, isAgent: boolean): MailboxError =>
  new MailboxError(
    isAgent ? 'FORBIDDEN' : 'MESSAGE_NOT_FOUND',
    isAgent ? 'Forbidden' : 'Message not found',
    `${messageId} is no message: it is an entry of the history of task ${taskId} (get_task's history[].messageId or ` +
      'status.message.messageId), and has no delivery ledger. ' +
      (ledgerIsTheirs
        ? `The ledger of the message that carried the task is get_delivery {"messageId": "${taskId}"} ` +
          `(HTTP: GET /v1/messages/${taskId}/delivery).`
        : `Read the task with get_task {"taskId": "${taskId}"} (GET /v1/tasks/${taskId}); a delivery ledger is shown ` +
          'only to its sender, auditors and admins.'),
    { messageId, taskId },
  );

/** Messages whose sender was looked up recently (a miss costs one stream read). */
const SENDER_CACHE = { maxEntries: 1_000, maxBytes: 8 * 1024 * 1024 };

@injectable()
export class DeliveryQueries {
  private readonly messages: StreamLoader;

  constructor(
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
  ) {
    this.messages = new StreamLoader(store, SENDER_CACHE);
  }

  async delivery(actor: Actor, input: unknown): Promise<DeliveryLedger> {
    const { messageId, after, limit } = parseInput(deliveryQuerySchema, input, 'get_delivery');
    const isAgent = actor.role === 'agent';
    const page = await this.projections.deliveryLedger(messageId, { after: after ?? null, limit });
    if (page) {
      if (isAgent && page.message.sender !== actor.identity) throw forbidden(messageId);
      const { message, counts } = page;
      // Why no wake was due is read from the send (one stream read, cached): the ledger keeps only that none was.
      const reason = message.wakeExpected ? null : noWakeReason(sendWakes((await this.sent(messageId))!));
      return {
        messageId,
        sender: message.sender,
        threadId: message.threadId,
        sentAt: message.sentAt,
        accepted: { position: message.position },
        wakeExpected: message.wakeExpected,
        ...(reason === null ? {} : { noWakeReason: reason }),
        escalatedAt: page.escalatedAt,
        replyDueBy: page.replyDueBy,
        replyOverdueAt: page.replyOverdueAt,
        summary: { recipients: message.recipientCount, ...counts },
        recipients: page.rows,
        nextAfter: page.nextAfter,
      };
    }
    // Not in the views: unknown, or sent so recently that the projector has not applied it yet. The log tells.
    const sent = await this.sent(messageId);
    if (!sent) await this.refuseHistoryEntry(actor, messageId);
    if (!sent || (isAgent && sent.from !== actor.identity)) throw isAgent ? forbidden(messageId) : messageNotInLog(messageId);
    return this.lagging(messageId, sent, [...new Set(sent.recipients)].sort(), after ?? null, limit);
  }

  /** An id that names no message, but an entry of a task's history the caller may read: said so (else nothing). */
  private async refuseHistoryEntry(actor: Actor, id: string): Promise<void> {
    const taskId = await historyEntryTask(this.store, this.projections, this.messages, actor, id);
    if (taskId === null) return;
    const isAgent = actor.role === 'agent';
    const ledgerIsTheirs = !isAgent || (await this.sent(taskId))?.from === actor.identity;
    throw historyEntryNoLedger(id, taskId, ledgerIsTheirs, isAgent);
  }

  private async sent(messageId: string): Promise<MessageSent['data'] | null> {
    return (await this.messages.load(messageStream(messageId), messageModel)).state.sent;
  }

  /** What the log alone proves of a send the views have not applied: accepted, nothing further yet. */
  private async lagging(
    messageId: string,
    sent: MessageSent['data'],
    recipients: string[],
    after: string | null,
    limit: number,
  ): Promise<DeliveryLedger> {
    const rest = after === null ? recipients : recipients.filter((recipient) => recipient > after);
    const rows = rest.slice(0, limit);
    // Whether a wake is due, by the read model's rule, as far as the views' registry tells (it may lag behind the send too).
    const active = new Set(
      (await this.projections.listAgents()).filter((agent) => !agent.retired).map((agent) => agent.identity),
    );
    const wakes = sendWakes(sent);
    const wakeExpected = wakeExpectedOf({ isActiveAgent: (identity) => active.has(identity) }, wakes);
    return {
      messageId,
      sender: sent.from,
      threadId: sent.threadId,
      sentAt: sent.sentAt,
      accepted: { position: null },
      wakeExpected,
      ...(wakeExpected ? {} : { noWakeReason: noWakeReason(wakes) }),
      escalatedAt: null,
      replyDueBy: null,
      replyOverdueAt: null,
      summary: { recipients: recipients.length, inView: 0, woken: 0, seen: 0, read: 0, replied: 0 },
      recipients: rows.map((recipient) => ({ recipient, inView: null, woken: null, seen: null, read: null, replied: null })),
      nextAfter: rest.length > limit ? rows[rows.length - 1] : null,
      viewsLagging: true,
    };
  }
}
