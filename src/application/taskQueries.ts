/** The task read side (issue 12): lists from the task views, one task as an A2A Task object from the log. */
import type { Logger } from 'pino';
import { inject, injectable } from 'tsyringe';
import type { Actor } from '../commands/roles';
import { decideSweepTask } from '../commands/tasks/decideTask';
import { foldTask, initialTaskLog, taskOf, type TaskLog } from '../commands/tasks/taskState';
import { historyEntryNotTask, noTaskBy, taskNotFound } from '../commands/tasks/taskErrors';
import { listingStates, unmatchableTaskListing } from './taskListing';
import { getTaskSchema, listTasksSchema } from '../commands/tasks/taskSchemas';
import { parseInput } from '../commands/validation';
import type { MailboxConfig } from '../config';
import type { EventStore } from '../events/eventStore';
import { messageStream, taskStream } from '../events/streams';
import type { StoredEvent, TaskEvent } from '../events/types';
import type { ProjectionStore } from '../projections/projectionStore';
import type { TaskView } from '../projections/readModel/taskView';
import { taskAsOf } from '../projections/readModel/taskRules';
import { TOKENS } from '../tokens';
import { requireRole } from './authorization';
import type { Clock } from './runtime';
import { CursorCodec, type CursorBinding } from './cursorCodec';
import { historyEntryTask } from './historyEntries';
import { messageModel } from './mailboxCommands';
import type { ListingOptions } from './mailboxQueries';
import { SeenMarks } from './seenMarks';
import { StreamLoader } from './streamLoader';
import { toA2aTask, type A2aTask, type HistoryEvent } from './taskA2a';
import { SWEEPER_ACTOR, TaskCommands } from './taskCommands';

/** A task in a listing: the view's record, less its bookkeeping (positions) and the audience list. */
export type ListedTask = Omit<TaskView, 'position' | 'updatedPosition' | 'audience'> & { audienceSize: number };

export interface TaskPage {
  tasks: ListedTask[];
  nextCursor: string | null;
}

/**
 * Built field by field, not by rest/spread: rest destructuring of 50 records cost ~0.22 ms of CPU per page, ten times
 * the rest of the listing (measured with process.cpuUsage). A new TaskView field must be added here too.
 */
const listed = (t: TaskView): ListedTask => ({
  taskId: t.taskId,
  threadId: t.threadId,
  sender: t.sender,
  to: t.to,
  subject: t.subject,
  priority: t.priority,
  sentAt: t.sentAt,
  isBroadcast: t.isBroadcast,
  audienceSize: t.audience.length,
  state: t.state,
  assignee: t.assignee,
  claimedAt: t.claimedAt,
  leaseExpiresAt: t.leaseExpiresAt,
  deadline: t.deadline,
  statusMessage: t.statusMessage,
  reason: t.reason,
  updatedAt: t.updatedAt,
  updatedBy: t.updatedBy,
  artifactCount: t.artifactCount,
  lapsedClaimant: t.lapsedClaimant,
  outcomeUnseen: t.outcomeUnseen === true, // records stored before the field have none
});

@injectable()
export class TaskQueries {
  private readonly messages: StreamLoader;
  private readonly cursors: CursorCodec;

  constructor(
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.Config) config: MailboxConfig,
    @inject(TaskCommands) private readonly commands: TaskCommands,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(SeenMarks) private readonly seen: SeenMarks,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {
    this.messages = new StreamLoader(store, { maxEntries: 1_000, maxBytes: 8 * 1024 * 1024 });
    this.cursors = CursorCodec.fromAdminToken(config.adminToken);
  }

  /** `shown`: false when the page is not shown to the caller (HTTP HEAD): nothing in it becomes seen. */
  async listTasks(actor: Actor, input: unknown, { shown = true }: ListingOptions = {}): Promise<TaskPage> {
    requireRole(actor, ['agent'], 'Listing tasks');
    const query = parseInput(listTasksSchema, input ?? {}, 'list_tasks');
    const unmatchable = unmatchableTaskListing(query);
    if (unmatchable) throw unmatchable;
    // A filter that leaves out nothing the view holds is none (the same listing): a cursor of either pages the other.
    const states = listingStates(query);
    const binding: CursorBinding = {
      caller: actor.identity,
      kind: 'tasks',
      listing: ['tasks', query.view, states],
    };
    const before = query.cursor === undefined ? null : Number(this.cursors.decode(binding, query.cursor));
    const now = this.clock.now().toISOString();
    const page = await this.projections.listTasks(actor.identity, { list: query.view, states, limit: query.limit, before });
    if (shown) this.noteSeen(actor, page.tasks);
    return {
      // As of now: a holder whose lease ran out is not shown as holding it while the sweep has not recorded it yet.
      tasks: page.tasks.map((task) => listed(taskAsOf(task, now, SWEEPER_ACTOR.identity))),
      nextCursor: page.nextBefore === null ? null : this.cursors.encode(binding, BigInt(page.nextBefore)),
    };
  }

  /** The sender, the audience (a direct task's recipient) and auditors see a task; to anyone else it does not exist. */
  /** `shown`: false when the task is not shown to the caller (HTTP HEAD): neither it nor its outcome is seen by it. */
  async getTask(actor: Actor, input: unknown, options: ListingOptions = {}): Promise<A2aTask> {
    const { taskId } = parseInput(getTaskSchema, input, 'get_task');
    const { state } = await this.messages.load(messageStream(taskId), messageModel);
    const sent = state.sent;
    if (!sent) {
      const entryOf = await historyEntryTask(this.store, this.projections, this.messages, actor, taskId);
      if (entryOf !== null) throw historyEntryNotTask(taskId, entryOf);
    }
    if (!sent?.task) throw noTaskBy(taskId, sent, actor);
    const mayRead =
      actor.role === 'auditor' ||
      actor.role === 'admin' ||
      sent.from === actor.identity ||
      sent.recipients.includes(actor.identity);
    if (!mayRead) throw taskNotFound(taskId);
    const shown = options.shown !== false;
    if (shown && actor.role === 'agent' && sent.recipients.includes(actor.identity)) this.seen.note(actor.identity, [taskId]);
    const events = (await this.store.readStream(taskStream(taskId))) as StoredEvent<TaskEvent>[];
    const log = foldTask(initialTaskLog(), events);
    const task = taskOf(sent, log)!;
    if (shown && task.outcomeUnseen && actor.role === 'agent' && actor.identity === task.sender)
      await this.seeOutcome(actor, taskId);
    const due = this.dueNow(state, log, taskId);
    return toA2aTask(sent, taskOf(sent, foldTask(log, due))!, [...events, ...due]);
  }

  /**
   * What the sweeper records at its next pass (a lapsed lease, an expiry), as the decider decides it now: a read shows
   * it, dated when it fell due, rather than the old holder (whose update is refused LEASE_EXPIRED already, and whose
   * task another may claim). Written by nobody: the sweep, or the next claim, records it.
   */
  private dueNow(message: Parameters<typeof decideSweepTask>[1]['message'], log: TaskLog, taskId: string): HistoryEvent[] {
    const now = this.clock.now().toISOString();
    const metadata = { commandId: 'read', correlationId: 'read', causationId: 'read', actor: SWEEPER_ACTOR, at: now };
    const due = decideSweepTask({ type: 'SweepTask', data: { taskId }, metadata }, { message, log });
    if (!Array.isArray(due)) return [];
    return due.map((event): HistoryEvent => {
      const stamp = (at: string) => ({
        eventId: `${taskId}:due:${event.type}:${at}`,
        metadata: { actor: SWEEPER_ACTOR.identity, at },
      });
      if (event.type === 'TaskLeaseExpired') {
        const at = event.data.leaseExpiresAt;
        return { ...event, data: { ...event.data, expiredAt: at }, ...stamp(at) };
      }
      if (event.type === 'TaskExpired') {
        const at = event.data.deadline;
        return { ...event, data: { ...event.data, expiredAt: at }, ...stamp(at) };
      }
      return { ...event, ...stamp(now) };
    });
  }

  /**
   * A task returned to a recipient of its message returns the message (its subject, sender, input): seen, as a message
   * listing makes it (docs/delivery.md). An agent that works its tasks from these routes alone never lists its inbox,
   * and was otherwise never seen: unwoken past the SLA, nudged about a task it had finished. The views keep no seenAt
   * for a task, so a page is noted whole; SeenMarks notes a pair once per process, and the read model keeps the first.
   */
  private noteSeen(actor: Actor, tasks: readonly TaskView[]): void {
    const returned: string[] = [];
    for (const task of tasks) if (task.audience.includes(actor.identity)) returned.push(task.taskId);
    this.seen.note(actor.identity, returned);
  }

  /**
   * Getting the task is how its sender sees the outcome (the full one: artifacts, history). Recorded on the request
   * path, once per task, so the sender's count falls as the answer arrives; a failure to record it never fails the
   * read (the next get records it).
   */
  private async seeOutcome(actor: Actor, taskId: string): Promise<void> {
    try {
      await this.commands.seeOutcome(actor, taskId);
    } catch (error) {
      this.logger.warn({ err: error, taskId, sender: actor.identity }, 'task outcome seen: not recorded; the next get retries');
    }
  }
}
