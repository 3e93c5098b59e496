/**
 * The task write side (issue 12): claim, transition and the sweeper's look,
 * each read-decide-append on the task's own stream with its expected revision
 * (CommandHandler), the message's part read from the message stream (it never
 * changes after the send).
 */
import { inject, injectable } from 'tsyringe';
import type { CommandMetadata } from '../commands/command';
import type { Actor } from '../commands/roles';
import {
  decideClaimTask,
  decideSeeTaskOutcome,
  decideSweepTask,
  decideTransitionTask,
  type TaskContext,
} from '../commands/tasks/decideTask';
import { runningLeaseExpiresAt, taskOf, type Task } from '../commands/tasks/taskState';
import { claimTaskSchema, transitionTaskSchema } from '../commands/tasks/taskSchemas';
import { historyEntryNotTask, noTaskBy } from '../commands/tasks/taskErrors';
import { parseInput } from '../commands/validation';
import type { MailboxConfig } from '../config';
import type { MailboxError } from '../errors';
import { messageStream, taskStream } from '../events/streams';
import type { TaskEvent, TaskState } from '../events/types';
import type { ProjectionRunner } from '../projections/projectionRunner';
import type { ProjectionStore } from '../projections/projectionStore';
import { TOKENS } from '../tokens';
import type { AgentDirectory } from './agentDirectory';
import { requireRole } from './authorization';
import type { CommandHandler } from './commandHandler';
import { historyEntryTask } from './historyEntries';
import {
  awaitViews,
  commandMetadata,
  messageModel,
  taskModel,
  withWarnings,
  type CommandOptions,
  type Warned,
} from './mailboxCommands';
import type { Clock, IdGenerator } from './runtime';

/** What a task command answers: the task as it now stands. */
export interface TaskResult extends Warned {
  taskId: string;
  state: TaskState;
  assignee: string | null;
  claimedAt: string | null;
  leaseExpiresAt: string | null;
  /** The events this command wrote (none: it changed nothing, e.g. a repeated claim). */
  events: Array<TaskEvent['type']>;
}

/** Who the sweeper writes as (metadata.actor). */
export const SWEEPER_ACTOR: Actor = { identity: 'sweeper', role: 'admin' };

@injectable()
export class TaskCommands {
  constructor(
    @inject(TOKENS.CommandHandler) private readonly handler: CommandHandler,
    @inject(TOKENS.ProjectionRunner) private readonly runner: ProjectionRunner,
    @inject(TOKENS.Config) private readonly config: MailboxConfig,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.IdGenerator) private readonly ids: IdGenerator,
    @inject(TOKENS.AgentDirectory) private readonly directory: AgentDirectory,
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
  ) {}

  async claim(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<TaskResult> {
    requireRole(actor, ['agent'], 'Claiming a task');
    const data = parseInput(claimTaskSchema, input, 'claim_task');
    // Whether the holder was retired (its claim then binds nobody): read now, as a send reads the audience.
    const registry = await this.directory.current();
    return this.run(actor, data.taskId, this.metadata(actor, options), (command, context) =>
      decideClaimTask({ type: 'ClaimTask', data, metadata: command }, { ...context, registry }),
    );
  }

  async transition(actor: Actor, input: unknown, options: CommandOptions = {}): Promise<TaskResult> {
    // Auditors write nothing: refused for the role, as a send and a claim are. They reached the decider, which answered
    // 409 INVALID_TRANSITION "From Submitted you may make no transition" (as if another state allowed one), and the
    // admin was told that a task move "needs the agent or auditor role".
    requireRole(actor, ['agent'], 'Changing a task');
    const data = parseInput(transitionTaskSchema, input, 'update_task');
    // Whether the sender was retired (nobody may ask it for input then): read now, as a claim reads the holder's.
    const registry = await this.directory.current();
    return this.run(actor, data.taskId, this.metadata(actor, options), (command, context) =>
      decideTransitionTask({ type: 'TransitionTask', data, metadata: command }, { ...context, registry }),
    );
  }

  /**
   * The sweeper's look at one task at `now`: ends what expired, returns what lapsed. The command id is
   * derived from the task and what is due, so two sweepers deciding the same write the same event ids.
   */
  async sweep(taskId: string, now: Date, due: string): Promise<TaskResult> {
    const at = now.toISOString();
    const commandId = `sweep:${taskId}:${due}`;
    const metadata: CommandMetadata = { commandId, correlationId: commandId, causationId: commandId, actor: SWEEPER_ACTOR, at };
    return this.run(SWEEPER_ACTOR, taskId, metadata, (command, context) =>
      decideSweepTask({ type: 'SweepTask', data: { taskId }, metadata: command }, context),
    );
  }

  /**
   * The sender just got a task that ended without it: records that it saw the outcome (TaskOutcomeSeen), so the
   * task stops waiting on it. One command id per task, so however many reads race or retry, it is written once
   * (and a later read decides nothing). Waits for the views, so the next heartbeat no longer counts it.
   */
  async seeOutcome(actor: Actor, taskId: string): Promise<TaskResult> {
    const commandId = `outcome-seen:${taskId}`;
    const at = this.clock.now().toISOString();
    const metadata: CommandMetadata = { commandId, correlationId: commandId, causationId: commandId, actor, at };
    return this.run(actor, taskId, metadata, (command, context) =>
      decideSeeTaskOutcome({ type: 'SeeTaskOutcome', data: { taskId }, metadata: command }, context),
    );
  }

  private async run(
    actor: Actor,
    taskId: string,
    metadata: CommandMetadata,
    decide: (metadata: CommandMetadata, context: TaskContext) => TaskEvent[] | MailboxError,
  ): Promise<TaskResult> {
    // 1. The message's part: fixed at the send, so read once, outside the retry loop.
    const { state: message } = await this.handler.load(messageStream(taskId), messageModel);
    if (!message.sent) {
      const entryOf = await historyEntryTask(this.handler, this.projections, this.handler, actor, taskId); // an id of a task's history
      if (entryOf !== null) throw historyEntryNotTask(taskId, entryOf, true);
    }
    if (!message.sent?.task) throw noTaskBy(taskId, message.sent, actor);
    // 2. Read the task's stream, decide, append at its revision (re-decided on a conflict: the first claim wins).
    const {
      state: log,
      appended,
      position,
    } = await this.handler.handle(taskStream(taskId), taskModel, metadata, (current) =>
      decide(metadata, { message, log: current }),
    );
    const task = taskOf(message.sent, log) as Task;
    const warnings = await awaitViews(this.runner, this.config.awaitProjectionMs, position);
    return {
      taskId,
      state: task.state,
      assignee: task.assignee,
      claimedAt: task.claimedAt,
      leaseExpiresAt: runningLeaseExpiresAt(task),
      events: appended.map((event) => event.type),
      ...withWarnings(warnings),
    };
  }

  private metadata(actor: Actor, options: CommandOptions): CommandMetadata {
    return commandMetadata(this.ids, this.clock, actor, options);
  }
}
