/**
 * The task views held in process memory: the memory projection store and
 * the scratch views (audit verify, the rules' specs) both keep them here.
 * Storage only: every change comes from the rules (taskRules.ts).
 */
import type { TaskState } from '../../events/types';
import { dueAt, type TaskChangeSink, type TaskList, type TaskView, type TaskViewLookup, type WaitingSince } from './taskView';

interface Listed {
  position: number;
  taskId: string;
}

/** What a task listing asks for: one list of one agent, newest first, optionally only some states. */
export interface TaskListQuery {
  list: TaskList;
  states?: readonly TaskState[];
  limit: number;
  /** Only tasks opened strictly before this log position (the previous page's last); null: from the newest. */
  before: number | null;
}

export interface TaskViewPage {
  tasks: TaskView[];
  /** The position of this page's last task when more follow (the next page's `before`), else null. */
  nextBefore: number | null;
}

function lowerBound(entries: readonly Listed[], position: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid].position < position) low = mid + 1;
    else high = mid;
  }
  return low;
}

export class TaskViewsMemory implements TaskViewLookup, TaskChangeSink {
  private readonly tasks = new Map<string, TaskView>();
  /** `${list} ${identity}` -> tasks in ascending position. */
  private readonly lists = new Map<string, Listed[]>();
  private readonly waiting = new Map<string, number>();
  /** The identities some task waits on: the last change that made one begin waiting (tasksWaitingBegan). */
  private readonly waitingSince = new Map<string, WaitingSince>();
  /** Open tasks that fall due some time (dueAt): all the sweeper ever has to look at. */
  private readonly timed = new Set<string>();
  /** The id of each event that made a line in a task's history -> that task (historyLineRecorded). */
  private readonly lines = new Map<string, string>();

  task(taskId: string): TaskView | undefined {
    return this.tasks.get(taskId);
  }

  taskUpserted(task: TaskView): void {
    this.tasks.set(task.taskId, oneShape(task));
    if (dueAt(task) !== null) this.timed.add(task.taskId);
    else this.timed.delete(task.taskId);
  }

  taskListed(list: TaskList, identity: string, taskId: string, position: number): void {
    const key = `${list} ${identity}`;
    let entries = this.lists.get(key);
    if (!entries) this.lists.set(key, (entries = []));
    const at = lowerBound(entries, position);
    if (entries[at]?.position === position) return;
    if (at === entries.length) entries.push({ position, taskId });
    else entries.splice(at, 0, { position, taskId });
  }

  taskUnlisted(list: TaskList, identity: string, taskId: string): void {
    const entries = this.lists.get(`${list} ${identity}`);
    const position = this.tasks.get(taskId)?.position;
    if (!entries || position === undefined) return;
    const at = lowerBound(entries, position);
    if (entries[at]?.taskId === taskId) entries.splice(at, 1);
  }

  tasksWaitingMoved(identity: string, by: 1 | -1): void {
    const next = (this.waiting.get(identity) ?? 0) + by;
    if (next === 0) {
      this.waiting.delete(identity);
      this.waitingSince.delete(identity);
    } else this.waiting.set(identity, next);
  }

  tasksWaitingBegan(identity: string, since: WaitingSince): void {
    this.waitingSince.set(identity, { position: since.position, at: since.at, taskId: since.taskId });
  }

  historyLineRecorded(eventId: string, taskId: string): void {
    this.lines.set(eventId, taskId);
  }

  /** Every line: the id of the event that made it -> its task. */
  historyLines(): ReadonlyMap<string, string> {
    return this.lines;
  }

  /** A page of the lines in the order they were recorded; `after`: how many were read before (the previous `next`). */
  historyLinePage(
    after: string | null,
    limit: number,
  ): { lines: Array<{ eventId: string; taskId: string }>; next: string | null } {
    const skip = after === null ? 0 : Number(after);
    const lines: Array<{ eventId: string; taskId: string }> = [];
    let index = 0;
    for (const [eventId, taskId] of this.lines) {
      if (index++ < skip) continue;
      if (lines.length === limit) break;
      lines.push({ eventId, taskId });
    }
    const read = skip + lines.length;
    return { lines, next: read < this.lines.size ? String(read) : null };
  }

  /** The task whose history has a line of this id (an event's), or null. */
  taskOfHistoryLine(eventId: string): string | null {
    return this.lines.get(eventId) ?? null;
  }

  tasksWaitingSince(identity: string): WaitingSince | null {
    return this.waitingSince.get(identity) ?? null;
  }

  tasksWaiting(identity: string): number {
    return this.waiting.get(identity) ?? 0;
  }

  /** Every identity some task waits on. */
  waitingIdentities(): string[] {
    return [...this.waiting.keys()];
  }

  /** Whether `identity` is one of waitingIdentities. */
  isWaitedOn(identity: string): boolean {
    return this.waiting.has(identity);
  }

  list(identity: string, query: TaskListQuery): TaskViewPage {
    const entries = this.lists.get(`${query.list} ${identity}`) ?? [];
    const states = query.states && query.states.length > 0 ? new Set(query.states) : null;
    const start = query.before === null ? entries.length : lowerBound(entries, query.before);
    const tasks: TaskView[] = [];
    for (let i = start - 1; i >= 0; i--) {
      const task = this.tasks.get(entries[i].taskId)!;
      if (states && !states.has(task.state)) continue;
      if (tasks.length === query.limit) return { tasks, nextBefore: tasks[tasks.length - 1].position };
      tasks.push(task);
    }
    return { tasks, nextBefore: null };
  }

  /**
   * Open tasks due at or before `now` (dueAt), the earliest due first (as the other stores read their due index); with
   * `after`, only those due after it.
   */
  due(now: string, limit: number, after?: string): TaskView[] {
    const at = Date.parse(now);
    const from = after === undefined ? -Infinity : Date.parse(after);
    const due: Array<{ when: number; task: TaskView }> = [];
    for (const taskId of this.timed) {
      const task = this.tasks.get(taskId)!;
      const when = dueAt(task);
      if (when !== null && when > from && when <= at) due.push({ when, task });
    }
    due.sort((a, b) => a.when - b.when || (a.task.taskId < b.task.taskId ? -1 : a.task.taskId > b.task.taskId ? 1 : 0));
    return due.slice(0, limit).map(({ task }) => task);
  }

  allTasks(): TaskView[] {
    return [...this.tasks.values()];
  }

  clear(): void {
    this.tasks.clear();
    this.lists.clear();
    this.waiting.clear();
    this.waitingSince.clear();
    this.timed.clear();
    this.lines.clear();
  }
}

/**
 * The record as it is kept: copied field by field into one object literal. The rules build records by spread
 * (readable), and V8 gave each spread-built record a hidden class of its own: a task list then read 50 objects of
 * 50 different shapes (megamorphic) and every record carried its own map (~0.5 KB). Measured: `GET /v1/tasks` spent
 * ~85 us per page of 50 copying them into the listing. A new TaskView field must be added here too.
 */
const oneShape = (t: TaskView): TaskView => ({
  taskId: t.taskId,
  threadId: t.threadId,
  sender: t.sender,
  to: t.to,
  subject: t.subject,
  priority: t.priority,
  sentAt: t.sentAt,
  isBroadcast: t.isBroadcast,
  audience: t.audience,
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
  position: t.position,
  updatedPosition: t.updatedPosition,
});
