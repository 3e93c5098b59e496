/** The write side: every command validated at the edge, decided purely, appended with its expected revision. */
import { inject, injectable } from 'tsyringe';
import type { Logger } from 'pino';
import { decideRegisterAgent, decideRetireAgent, decideRotateAgentToken, registryAsOf } from '../commands/agentRegistry';
import type { CommandMetadata, CommandWarning } from '../commands/command';
import { msCeiling } from '../commands/isoTime';
import { decideArchiveMessage, decideMarkRead, decideUnarchiveMessage } from '../commands/receipts';
import type { Actor } from '../commands/roles';
import {
  oneMessageSchema,
  markReadSchema,
  registerAgentSchema,
  retireAgentSchema,
  sendMessageSchema,
  type MarkReadInput,
} from '../commands/schemas';
import {
  decideSendMessage,
  emptyAudienceWarnings,
  selfAddressedWarnings,
  sendWarnings,
  spacedTagWarnings,
} from '../commands/sendMessage';
import { parseInput } from '../commands/validation';
import type { MailboxConfig } from '../config';
import { isMailboxError, MailboxError, type ErrorEnvelope } from '../errors';
import { deterministicMessageId } from '../events/eventIds';
import { AGENT_REGISTRY_STREAM, messageStream } from '../events/streams';
import type { Addressee } from '../events/addressing';
import type { ProjectionRunner } from '../projections/projectionRunner';
import type { ProjectionStore } from '../projections/projectionStore';
import { SeenMarks } from './seenMarks';
import { messageModel, taskModel } from './streamModels';
import { historyEntryTask } from './historyEntries';
import { answerTasksInThread, askingRead, holderNotes, threadTasksSent } from './taskAnswers';
import { cancelRetiredSenderTasks, releaseRetiredHoldings } from './retiredHoldings';
import { TOKENS } from '../tokens';
import { type AgentDirectory, registryModel } from './agentDirectory';
import { caseVariantFilterRefusal } from './caseVariantFilter';
import { requireRole } from './authorization';
import type { CommandHandler, WriteFailure } from './commandHandler';
import type { Clock, IdGenerator } from './runtime';
import { generateToken, hashToken, requestFingerprint } from './tokenHash';

export { messageModel, taskModel };

/** Receipts a read-all appends at once (each on its own message stream). */
const READ_ALL_PARALLEL = 16;

export interface SendResult {
  messageId: string;
  status: 'sent';
  sentAt: string;
  to: Addressee;
  recipients: string[];
  threadId: string;
  /** The reply's due time as stored (UTC, to the millisecond; a duration counted from sentAt), when one was asked. */
  expectsReplyBy?: string;
  warnings?: Warning[];
}
/**
 * A send's result and whether this call wrote it. `replayed` stays beside the result, never in it: DESIGN has a
 * retry return the original result (deep-equal), so each surface says a replay its own way (HTTP: the
 * Idempotent-Replayed header; MCP: the tool result's _meta; the library: sendOutcome).
 */
export interface SendOutcome {
  result: SendResult;
  /** True: a retry with the same idempotency key and content found the message sent already; nothing was written. */
  replayed: boolean;
}
/** Said by an accepted command whose views did not show it within MAILBOX_AWAIT_PROJECTION_MS (it is durable all the same). */
export type ViewsLaggingWarning = { code: 'VIEWS_LAGGING'; message: string; position: string };
/** A hint on an accepted command (responseSchemas' warningSchema): its code, a sentence, and details. */
export type Warning = CommandWarning;

/** Something an accepted command has to say: `warnings` on every command result (absent when there is nothing). */
export interface Warned {
  warnings?: Warning[];
}
export interface ReadResult extends Warned {
  messageId: string;
  status: 'read';
  readAt: string;
}
export type BulkReadResult = Warned & {
  results: Array<Omit<ReadResult, 'warnings'> | { messageId: string; status: 'error'; error: ErrorEnvelope }>;
};
/**
 * mark_read {all: true}: which unread messages were marked now (ids and how many), and how many matched
 * but were withheld because they were never returned to the caller (includeUnseen: none are withheld).
 */
export interface ReadAllResult extends Warned {
  all: true;
  status: 'read';
  changed: number;
  messageIds: string[];
  withheldUnseenCount: number;
  /** When these were marked read; null when nothing changed. */
  readAt: string | null;
}
/** Archived; `changed` false: it was archived already (archivedAt is that first archive), nothing was written. */
export interface ArchiveResult extends Warned {
  messageId: string;
  status: 'archived';
  archivedAt: string;
  changed: boolean;
}
/** Back in the inbox; `changed` false: it was not archived, nothing was written. */
export interface UnarchiveResult extends Warned {
  messageId: string;
  status: 'inbox';
  readAt: string | null;
  changed: boolean;
}
export interface Registration extends Warned {
  identity: string;
  role: string;
  token: string;
  registeredAt: string;
}
export interface Retirement extends Warned {
  identity: string;
  retiredAt: string;
  /** False: it was already retired (retiredAt says when), so this call changed nothing. */
  changed: boolean;
  /** The broadcast tasks it held that this retirement returned to their audiences (retiredHoldings.ts). */
  releasedTasks: string[];
  /** The tasks it sent that had not ended, which this retirement canceled (reason "sender retired"). */
  canceledTasks: string[];
}
export interface TokenRotation extends Warned {
  identity: string;
  token: string;
  rotatedAt: string;
}

export interface CommandOptions {
  correlationId?: string;
  idempotencyKey?: string;
}

@injectable()
export class MailboxCommands {
  constructor(
    @inject(TOKENS.CommandHandler) private readonly handler: CommandHandler,
    @inject(TOKENS.AgentDirectory) private readonly directory: AgentDirectory,
    @inject(TOKENS.ProjectionRunner) private readonly runner: ProjectionRunner,
    @inject(TOKENS.Config) private readonly config: MailboxConfig,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(SeenMarks) private readonly seen: SeenMarks,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  /**
   * An admin's change to the registry, said once at info (an operator tailing the log saw nothing of it): who did it,
   * to whom, and the log position of the event written (null: nothing was, a repeat). Never the token nor its hash.
   * Agents' sends and reads are not said: their volume would bury these.
   */
  private logAdminAction(actor: Actor, action: string, identity: string, position: bigint | null, more: object = {}): void {
    const at = position === null ? 'nothing written' : `at log position ${position}`;
    this.logger.info(
      { adminAction: action, by: actor.identity, identity, position: position?.toString() ?? null, ...more },
      `agent ${identity} ${action} by ${actor.identity} (${at})`,
    );
  }

  /** Whether commands' appends are failing now (a full disk, a store that is down): readiness says so. */
  writeFailure(): WriteFailure | null {
    return this.handler.writeFailure();
  }

  async registerAgent(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<Registration> {
    requireRole(actor, ['admin'], 'Registering an agent');
    const data = parseInput(registerAgentSchema, input, 'register_agent');
    const token = generateToken();
    const metadata = this.metadata(actor, options);
    const { state, position } = await this.handler.handle(AGENT_REGISTRY_STREAM, registryModel, metadata, (registry) =>
      decideRegisterAgent({ type: 'RegisterAgent', data: { ...data, tokenHash: hashToken(token) }, metadata }, registry),
    );
    const agent = state.agents.get(data.identity)!;
    this.logAdminAction(actor, 'registered', agent.identity, position, { role: agent.role });
    const warnings = await this.awaitViews(position);
    return { identity: agent.identity, role: agent.role, token, registeredAt: agent.registeredAt, ...withWarnings(warnings) };
  }

  async retireAgent(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<Retirement> {
    requireRole(actor, ['admin'], 'Retiring an agent');
    const data = parseInput(retireAgentSchema, input, 'retire_agent');
    const metadata = this.metadata(actor, options);
    const { state, position, appended } = await this.handler.handle(AGENT_REGISTRY_STREAM, registryModel, metadata, (registry) =>
      decideRetireAgent({ type: 'RetireAgent', data, metadata }, registry),
    );
    this.directory.revoked(data.identity, 'agent retired'); // its token and open wake streams end now, not at the next registry read
    this.logAdminAction(actor, appended.length > 0 ? 'retired' : 'already retired', data.identity, position);
    // The views show every claim logged before the retirement once they show it: only then are its holdings complete.
    const lagging = await this.awaitViews(position);
    const deps = { handler: this.handler, projections: this.projections };
    // Its own open tasks first: one it sent and holds is canceled, not returned to an audience that could never
    // hand it back to anyone.
    const canceled = await cancelRetiredSenderTasks(deps, data.identity, state, metadata);
    const released = await releaseRetiredHoldings(deps, data.identity, state, metadata);
    const warnings = [
      ...canceled.warnings,
      ...released.warnings,
      ...(lagging.length > 0 ? [holdingsUnsure(data.identity), ...lagging] : []),
    ];
    const last = [canceled.position, released.position].reduce<bigint | null>(
      (max, at) => (at !== null && (max === null || at > max) ? at : max),
      null,
    );
    if (last !== null) warnings.push(...(await this.awaitViews(last)));
    return {
      identity: data.identity,
      retiredAt: state.agents.get(data.identity)!.retiredAt!,
      // A repeat answered as the first did (same retiredAt), and read as a fresh retirement: it now says it changed nothing.
      changed: appended.length > 0,
      releasedTasks: released.taskIds,
      canceledTasks: canceled.taskIds,
      ...withWarnings(warnings),
    };
  }

  /** A new token for a registered agent; the old one is refused from then on (the hash only is stored). */
  async rotateAgentToken(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<TokenRotation> {
    requireRole(actor, ['admin'], 'Issuing an agent a new token');
    const data = parseInput(retireAgentSchema, input, 'rotate_agent_token'); // the same shape: {identity}
    const token = generateToken();
    const metadata = this.metadata(actor, options);
    const { position } = await this.handler.handle(AGENT_REGISTRY_STREAM, registryModel, metadata, (registry) =>
      decideRotateAgentToken(
        { type: 'RotateAgentToken', data: { identity: data.identity, tokenHash: hashToken(token) }, metadata },
        registry,
      ),
    );
    this.directory.revoked(data.identity, 'token rotated'); // what the old token opened (wake streams) ends now
    this.logAdminAction(actor, 'given a new token', data.identity, position);
    const warnings = await this.awaitViews(position);
    return { identity: data.identity, token, rotatedAt: metadata.at, ...withWarnings(warnings) };
  }

  async send(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<SendResult> {
    return (await this.sendOutcome(actor, input, options)).result;
  }

  /** send, also saying whether this call wrote the message or replayed one sent already with its key. */
  async sendOutcome(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<SendOutcome> {
    requireRole(actor, ['agent'], 'Sending a message');
    const bodyKey = input && typeof input === 'object' ? (input as { idempotencyKey?: unknown }).idempotencyKey : undefined;
    if (options.idempotencyKey !== undefined && bodyKey !== undefined && bodyKey !== options.idempotencyKey) {
      // Two different keys for one request: neither may be silently dropped.
      throw new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        'The Idempotency-Key header and the idempotencyKey field differ; send one of them, or the same value in both.',
        { field: 'idempotencyKey' },
      );
    }
    const raw =
      options.idempotencyKey !== undefined && input && typeof input === 'object'
        ? { ...input, idempotencyKey: options.idempotencyKey }
        : input;
    const data = parseInput(sendMessageSchema, raw, 'add_message');
    const metadata = this.metadata(actor, options);
    const key = data.idempotencyKey ?? null;
    const messageId = deterministicMessageId(actor.identity, key, metadata.commandId);
    const { idempotencyKey: _key, ...fingerprinted } = data;
    const requestHash = requestFingerprint(fingerprinted);
    const registry = await this.directory.current();
    const parent = data.inReplyTo ? (await this.handler.load(messageStream(data.inReplyTo), messageModel)).state : null;
    // inReplyTo naming no message: an entry of a task's history, named so in the refusal (historyEntries.ts).
    const parentEntryOf =
      data.inReplyTo && !parent?.sent
        ? await historyEntryTask(this.handler, this.projections, this.handler, actor, data.inReplyTo)
        : null;
    const policy = { maxBodyBytes: this.config.maxBodyBytes, strictRecipients: this.config.strictRecipients };
    // Read beside the append (taskAnswers.ts): the tasks asking the sender, for its answers and notes; not for a new thread.
    const inThread = data.inReplyTo !== undefined || data.threadId !== undefined;
    const asking = inThread ? askingRead(this.projections, actor.identity) : null;
    // Without a key the message's id is new (from this command's id): its stream is claimed new unread. With one, the id
    // is the key's, used before if this is a repeat: read first (CommandHandler.handle).
    const { state, appended, position } = await this.handler.handle(
      messageStream(messageId),
      messageModel,
      metadata,
      (message) =>
        decideSendMessage(
          { type: 'SendMessage', data: { messageId, input: data, requestHash }, metadata },
          { message, registry, parent, parentEntryOf },
          policy,
        ),
      { freshName: key === null },
    );
    // The sender's message in a task's thread, to the task's holder, answers the task's question (taskAnswers.ts).
    const replayed = appended.length === 0;
    // A replay in a named thread also reads back what its first run answered there (threadTasksSent).
    const threadTasks = replayed && inThread ? await threadTasksSent(this.projections, actor.identity, state.sent!) : [];
    const answered = await answerTasksInThread(
      { handler: this.handler },
      actor,
      state.sent!,
      parent,
      metadata,
      asking,
      replayed,
      threadTasks,
    );
    const lagging = await this.awaitViews(answered.position ?? position);
    // The sender's own tasks in the thread, held by it: a message does not move them (taskAnswers.ts holderNotes).
    const sent = state.sent!;
    // A replay's notes are its first run's: the tasks read as of its MessageSent's log position (holderNotes).
    const replay = replayed && inThread ? { handler: this.handler, position: await this.sentPosition(messageId) } : null;
    const held = inThread ? await holderNotes(this.projections, actor, sent, parent, replay) : [];
    // Also on an idempotent replay: a retried send returns the same result as the original, warnings included (the
    // registry's warnings as it stood at the send, not as a retry finds it). A send just decided read the registry as it
    // stands: no copy of every agent per send.
    const registryAtSend = replayed ? registryAsOf(registry, sent.sentAt) : registry;
    const warnings = [
      ...sendWarnings(data, registryAtSend, this.config.strictRecipients),
      ...spacedTagWarnings((raw as { tags?: unknown }).tags),
      ...selfAddressedWarnings(sent.from, sent.recipients),
      ...emptyAudienceWarnings(sent),
      ...answered.warnings,
      ...held,
      ...lagging,
    ];
    const result: SendResult = {
      messageId,
      status: 'sent',
      sentAt: sent.sentAt,
      to: sent.to,
      recipients: sent.recipients,
      threadId: sent.threadId,
      // As stored, not as sent: a duration ("2h") or an offset time ("...+02:00", finer than a millisecond) is resolved
      // to the UTC time the reply is due by, which the sender could otherwise not know.
      ...(state.replyDueBy === null ? {} : { expectsReplyBy: state.replyDueBy }),
      ...(warnings.length ? { warnings } : {}),
    };
    // A retry with the same key and content found the message sent already (also when it raced the original).
    return { result, replayed };
  }

  async markRead(
    actor: Actor,
    input: unknown,
    options: CommandOptions = {},
  ): Promise<ReadResult | BulkReadResult | ReadAllResult> {
    requireRole(actor, ['agent'], 'Marking a message read');
    const data = parseInput(markReadSchema, input, 'mark_read');
    if (data.all) return this.markAllRead(actor, data, options);
    if (data.messageId !== undefined) {
      const { result, position } = await this.markOneRead(actor, data.messageId, options);
      return { ...result, ...withWarnings(await this.awaitViews(position)) };
    }
    let newest: bigint | null = null;
    const { distinct, repeats } = distinctIds(data.messageIds!);
    const results = await Promise.all(
      distinct.map((messageId) =>
        this.markOneRead(actor, messageId, options).then(
          ({ result, position }) => {
            if (position !== null && (newest === null || position > newest)) newest = position;
            return result;
          },
          (error: unknown) => {
            if (!isMailboxError(error)) throw error;
            return { messageId, status: 'error' as const, error: error.envelope };
          },
        ),
      ),
    );
    // One wait for the newest receipt: the views apply the log in order, so the others are in by then.
    return { results, ...withWarnings([...repeats, ...(await this.awaitViews(newest))]) };
  }

  /**
   * Read-all (issue 13): the caller's unread messages matching the filters, from the views, marked read
   * (one receipt per message, on its own stream, as mark_read by id writes it: getMessage and a later
   * mark_read see it). Only those returned to the caller before (seen) unless includeUnseen; the rest are
   * counted as withheld. Marks noted by earlier listings are written and in the views first, so what was
   * just listed counts as seen. Idempotent: a second call finds nothing unread that the first one marked.
   * Not one atomic append: receipts live on each message's stream; a failure part way throws, leaves
   * the rest unread, and a retry marks them (nothing twice).
   */
  private async markAllRead(actor: Actor, data: MarkReadInput, options: CommandOptions): Promise<ReadAllResult> {
    const marks = await this.seen.writeFor(actor.identity);
    if (marks !== null) await this.runner.waitFor(marks, this.config.awaitProjectionMs);
    const before = data.before === undefined ? null : msCeiling(data.before); // exact, also when finer than sentAt's ms
    const targets: string[] = [];
    let withheld = 0;
    let page: { messages: Array<{ messageId: string; sentAt: string; seenAt: string | null }>; nextBefore: bigint | null };
    let bound: bigint | null = null;
    do {
      page = await this.projections.listMessages(actor.identity, {
        box: 'inbox',
        status: 'unread',
        ...(data.from !== undefined ? { from: data.from } : {}),
        ...(data.threadId !== undefined ? { threadId: data.threadId } : {}),
        ...(data.priority !== undefined ? { priority: data.priority } : {}),
        limit: 200,
        before: bound,
      });
      for (const message of page.messages) {
        if (before !== null && !(Date.parse(message.sentAt) < before)) continue;
        if (message.seenAt === null && data.includeUnseen !== true) withheld++;
        else targets.push(message.messageId);
      }
      bound = page.nextBefore;
    } while (bound !== null);
    // Nothing found from a case variant of an agent (from: @Bob, @bob registered): said, not answered "changed 0".
    if (targets.length === 0 && withheld === 0 && data.from !== undefined) {
      const refusal = caseVariantFilterRefusal('mark_read', 'from', data.from, await this.directory.current());
      if (refusal) throw refusal;
    }

    const base = this.metadata(actor, options); // one moment for every receipt of the call
    const changed: string[] = [];
    let newest: bigint | null = null;
    let failure: unknown = null;
    for (let start = 0; start < targets.length; start += READ_ALL_PARALLEL) {
      await Promise.all(
        targets.slice(start, start + READ_ALL_PARALLEL).map(async (messageId) => {
          try {
            const metadata = { ...base, commandId: this.ids.next() };
            const { position } = await this.handler.handle(messageStream(messageId), messageModel, metadata, (message) =>
              decideMarkRead({ type: 'MarkRead', data: { messageId }, metadata }, message),
            );
            if (position === null) return; // read meanwhile: nothing to change
            changed.push(messageId);
            if (newest === null || position > newest) newest = position;
          } catch (error) {
            failure ??= error;
          }
        }),
      );
    }
    if (failure !== null) throw failure;
    return {
      all: true,
      status: 'read',
      changed: changed.length,
      messageIds: changed,
      withheldUnseenCount: withheld,
      readAt: changed.length > 0 ? base.at : null,
      ...withWarnings(await this.awaitViews(newest)),
    };
  }

  private async markOneRead(
    actor: Actor,
    messageId: string,
    options: CommandOptions,
  ): Promise<{ result: ReadResult; position: bigint | null }> {
    const metadata = this.metadata(actor, options);
    const { state, position } = await this.handler.handle(messageStream(messageId), messageModel, metadata, (message) =>
      decideMarkRead({ type: 'MarkRead', data: { messageId }, metadata }, message),
    );
    return { result: { messageId, status: 'read', readAt: state.recipients.get(actor.identity)!.readAt! }, position };
  }

  async archive(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<ArchiveResult> {
    requireRole(actor, ['agent'], 'Archiving a message');
    const { messageId } = parseInput(oneMessageSchema, input, 'archive_message');
    const metadata = this.metadata(actor, options);
    const { state, appended, position } = await this.handler.handle(messageStream(messageId), messageModel, metadata, (message) =>
      decideArchiveMessage({ type: 'ArchiveMessage', data: { messageId }, metadata }, message),
    );
    const warnings = await this.awaitViews(position);
    return {
      messageId,
      status: 'archived',
      archivedAt: state.recipients.get(actor.identity)!.archivedAt!,
      changed: appended.length > 0,
      ...withWarnings(warnings),
    };
  }

  async unarchive(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<UnarchiveResult> {
    requireRole(actor, ['agent'], 'Unarchiving a message');
    const { messageId } = parseInput(oneMessageSchema, input, 'unarchive_message');
    const metadata = this.metadata(actor, options);
    const { state, appended, position } = await this.handler.handle(messageStream(messageId), messageModel, metadata, (message) =>
      decideUnarchiveMessage({ type: 'UnarchiveMessage', data: { messageId }, metadata }, message),
    );
    const warnings = await this.awaitViews(position);
    return {
      messageId,
      status: 'inbox',
      readAt: state.recipients.get(actor.identity)!.readAt,
      changed: appended.length > 0,
      ...withWarnings(warnings),
    };
  }

  /** The log position of a message's MessageSent (its stream's first event). */
  private async sentPosition(messageId: string): Promise<bigint> {
    const [sent] = await this.handler.events(messageStream(messageId));
    return sent.position;
  }

  private metadata(actor: Actor, options: CommandOptions): CommandMetadata {
    return commandMetadata(this.ids, this.clock, actor, options);
  }

  /**
   * Read-your-writes: the caller's next list shows what it just did (bounded
   * wait). The write is durable either way; when the views did not catch up in
   * time, the answer says so instead of pretending they did.
   */
  private awaitViews(position: bigint | null): Promise<ViewsLaggingWarning[]> {
    return awaitViews(this.runner, this.config.awaitProjectionMs, position);
  }
}

/** A command's context: a fresh command id, the caller's correlation id (else the command's), the actor, the clock's time. */
export function commandMetadata(ids: IdGenerator, clock: Clock, actor: Actor, options: CommandOptions): CommandMetadata {
  const commandId = ids.next();
  const correlationId = options.correlationId ?? commandId;
  return { commandId, correlationId, causationId: correlationId, actor, at: clock.now().toISOString() };
}

/**
 * Read-your-writes for every command side: a bounded wait for the views to
 * show `position`; when they did not in time, a warning instead of a claim.
 */
export async function awaitViews(
  runner: ProjectionRunner,
  waitMs: number,
  position: bigint | null,
): Promise<ViewsLaggingWarning[]> {
  if (position === null || waitMs <= 0 || (await runner.waitFor(position, waitMs))) return [];
  // Views of another log (a take-over of the namespace): "it appears there once they catch up" would be untrue.
  if (runner.viewsOfAnotherLog())
    return [
      {
        code: 'VIEWS_LAGGING',
        position: position.toString(),
        message:
          `Accepted and durable at log position ${position} of this mailbox's event log, but the views this node serves ` +
          'belong to another event log (another mailbox took them over): they will not show it until an operator acts ' +
          '(see /readyz). Do not repeat the command.',
      },
    ];
  return [
    {
      code: 'VIEWS_LAGGING',
      position: position.toString(),
      message:
        `Accepted and durable at log position ${position}, but the views (inboxes, counts, agent list) did not show it ` +
        `within ${waitMs} ms; it appears there once they catch up, so list again shortly instead of repeating the command.`,
    },
  ];
}

/** The views lagged behind a retirement: the tasks it held may not all have been found, hence not all returned. */
const holdingsUnsure = (identity: string): Warning => ({
  code: 'TASK_NOT_RELEASED',
  message:
    `The views did not show ${identity}'s retirement in time, so a broadcast task it claimed just before may not have been ` +
    `returned to its audience, nor a task it sent just before canceled; retire ${identity} again once they catch up ` +
    "(it writes each release and cancel once). Meanwhile any audience member's claim takes such a task.",
});

/**
 * The ids of a bulk mark_read, each once in the order given, and a warning per repeat: a message is marked read
 * once and has one result, so a caller that pairs its ids with the results is told which entries were folded
 * (ids compare as parsed: an id in capitals names the same message as in lower case).
 */
function distinctIds(ids: readonly string[]): { distinct: string[]; repeats: Warning[] } {
  const firstIndex = new Map<string, number>();
  const repeats: Warning[] = [];
  ids.forEach((messageId, index) => {
    const first = firstIndex.get(messageId);
    if (first === undefined) firstIndex.set(messageId, index);
    else
      repeats.push({
        code: 'DUPLICATE_MESSAGE_ID',
        message: `messageIds[${index}] names the same message as messageIds[${first}] (${messageId}): it was marked read once, with one result.`,
        messageId,
        index,
        firstIndex: first,
      });
  });
  return { distinct: [...firstIndex.keys()], repeats };
}

export const withWarnings = (warnings: readonly Warning[]): Warned => (warnings.length > 0 ? { warnings: [...warnings] } : {});
