/**
 * The task views in Redis (issue 12). The rules are the read model's own
 * (readModel/taskRules.ts), run here in Node over the task records the batch
 * touches (read first, one HMGET), and written by the apply script as plain
 * ops in the global block: atomically with the checkpoint, gated by it like
 * every other change. All task keys share the global hash tag, so a task
 * change is one slot even on Redis Cluster.
 *
 *   <prefix>{<ns>}:tasks                  task records (JSON) by task id
 *   <prefix>{<ns>}:tasks:<list>:<@b>      lex-ordered `<position>:<taskId>` (assigned | claimable | sent)
 *   <prefix>{<ns>}:tasksWaiting           tasks waiting on each identity
 *   <prefix>{<ns>}:tasksWaitingSince      the last change that made a task begin waiting on each (waitingSinceMark)
 *   <prefix>{<ns>}:tasks:lines            the task of each event id that made a line in a task's history
 *   <prefix>{<ns>}:tasks:timed            open tasks with a deadline or lease, scored by when they fall due (ms)
 *
 * Writers are one per generation and apply in log order; a batch with task
 * facts is planned only after the batches before it were applied, so the
 * records read are the ones the rules must see.
 */
import type { Logger } from 'pino';
import { redisCall, type RedisClient } from './redisConnection';
import { taskWakesFor } from '../../projections/readModel/taskWakes';
import { evolveTask } from '../../projections/readModel/taskRules';
import {
  dueAt,
  waitingSinceMark,
  waitingSinceOf,
  type TaskChangeSink,
  type TaskList,
  type TaskView,
} from '../../projections/readModel/taskView';
import type { HeartbeatCounts } from '../../projections/projectionStore';
import type { TaskListQuery, TaskViewPage } from '../../projections/readModel/taskViewsMemory';
import type { ProjectedEvent, TaskFact } from '../../projections/viewChanges';
import { padPosition, type RedisKeys } from './redisKeys';

export class RedisTaskKeys {
  constructor(private readonly keys: RedisKeys) {}

  records(prefix: string): string {
    return `${prefix}${this.keys.globalTag}:tasks`;
  }

  list(prefix: string, list: TaskList, identity: string): string {
    return `${prefix}${this.keys.globalTag}:tasks:${list}:${identity}`;
  }

  waiting(prefix: string): string {
    return `${prefix}${this.keys.globalTag}:tasksWaiting`;
  }

  waitingSince(prefix: string): string {
    return `${prefix}${this.keys.globalTag}:tasksWaitingSince`;
  }

  lines(prefix: string): string {
    return `${prefix}${this.keys.globalTag}:tasks:lines`;
  }

  timed(prefix: string): string {
    return `${prefix}${this.keys.globalTag}:tasks:timed`;
  }
}

const isTaskFact = (fact: ProjectedEvent['changes'][number]): fact is TaskFact =>
  fact.kind === 'taskOpened' || fact.kind === 'taskChanged';

export const hasTaskFacts = (events: readonly ProjectedEvent[]): boolean =>
  events.some((event) => event.changes.some(isTaskFact));

const taskIdOf = (fact: TaskFact): string => (fact.kind === 'taskOpened' ? fact.task.taskId : fact.event.data.taskId);

/** The apply script's task ops, per event position (padded), each `[code, ...args]` (see redisApplyScript.ts). */
export type TaskOps = Map<string, string[][]>;

/** Runs the task rules over the batch's task facts and returns the ops that write their changes. */
export async function planTaskOps(
  client: RedisClient,
  keys: RedisTaskKeys,
  prefix: string,
  events: readonly ProjectedEvent[],
): Promise<TaskOps> {
  const ops: TaskOps = new Map();
  const ids = new Set<string>();
  for (const event of events) for (const fact of event.changes) if (isTaskFact(fact)) ids.add(taskIdOf(fact));
  if (ids.size === 0) return ops;
  const wanted = [...ids];
  // Translated as every other call (UNAVAILABLE when Redis does not answer): a raw "Command timed out" read as a bug.
  const stored = await redisCall('Redis projections (task records)', () => client.hmget(keys.records(prefix), ...wanted));
  const records = new Map<string, TaskView>();
  stored.forEach((json, i) => {
    if (json !== null) records.set(wanted[i], JSON.parse(json) as TaskView);
  });
  const view = { task: (taskId: string) => records.get(taskId) };
  for (const event of events) {
    const pos = padPosition(event.position);
    const eventOps: string[][] = [];
    const sink: TaskChangeSink = {
      taskUpserted: (task) => {
        records.set(task.taskId, task);
        eventOps.push(['tu', task.taskId, JSON.stringify(task)]);
        const due = dueAt(task);
        eventOps.push(['tt', task.taskId, due === null ? '' : String(due)]);
      },
      taskListed: (list, identity, taskId, position) =>
        eventOps.push(['tl', `${list}:${identity}`, `${padPosition(BigInt(position))}:${taskId}`]),
      taskUnlisted: (list, identity, taskId) => {
        const position = records.get(taskId)!.position;
        eventOps.push(['tn', `${list}:${identity}`, `${padPosition(BigInt(position))}:${taskId}`]);
      },
      tasksWaitingMoved: (identity, by) => eventOps.push(['tw', identity, String(by)]),
      tasksWaitingBegan: (identity, since) => eventOps.push(['ts', identity, waitingSinceMark(since)]),
      historyLineRecorded: (eventId, taskId) => eventOps.push(['th', eventId, taskId]),
    };
    for (const fact of event.changes) {
      if (!isTaskFact(fact)) continue;
      evolveTask(view, fact, event.position, sink);
      for (const wake of taskWakesFor(fact, event.position, view)) eventOps.push(['tp', wake.recipient, JSON.stringify(wake)]);
    }
    if (eventOps.length > 0) ops.set(pos, eventOps);
  }
  return ops;
}

/**
 * Told of an index entry whose task record is missing, each time a read meets it: a tasks:timed entry (the sweeper's
 * read, RedisTaskReader.due) or a task list's (RedisTaskReader.list). The apply script writes an entry and its record
 * together, so such an entry is a Redis changed by hand or partly restored.
 */
export type DanglingTaskEntry = (
  entry: { taskId: string; recordsKey: string } & ({ timedKey: string } | { listKey: string }),
) => void;

/** Dangling entries told, remembered so that each is told once (a sweep meets it every few seconds): bounded. */
const MAX_DANGLING_TOLD = 10_000;

/**
 * A DanglingTaskEntry that warns once per entry (per process, up to MAX_DANGLING_TOLD remembered; past it, each is
 * told again once), saying what the entry costs and the way out; no logger: nothing is said.
 */
export function danglingEntryLogger(logger: Pick<Logger, 'warn'> | undefined): DanglingTaskEntry {
  const told = new Set<string>();
  return (entry) => {
    const indexKey = 'timedKey' in entry ? entry.timedKey : entry.listKey;
    const once = `${indexKey} ${entry.taskId}`;
    if (!logger || told.has(once)) return;
    if (told.size >= MAX_DANGLING_TOLD) told.clear();
    told.add(once);
    const consequence =
      'timedKey' in entry ? 'the task sweeper cannot end it and passes over it' : 'task lists pass over it (a task fewer)';
    logger.warn(
      entry,
      `projections: ${indexKey} lists task ${entry.taskId}, which has no record in ${entry.recordsKey}: ${consequence}. ` +
        'The views were changed outside the mailbox or partly restored; ' +
        '`mailbox audit verify` shows what else differs from the log, `mailbox projections rebuild` makes them again from it.',
    );
  };
}

/** The task views' reads. */
export class RedisTaskReader {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisTaskKeys,
    private readonly onDangling: DanglingTaskEntry = () => undefined,
  ) {}

  async task(prefix: string, taskId: string): Promise<TaskView | undefined> {
    const json = await this.client.hget(this.keys.records(prefix), taskId);
    return json === null ? undefined : (JSON.parse(json) as TaskView);
  }

  async taskOfHistoryLine(prefix: string, eventId: string): Promise<string | null> {
    return this.client.hget(this.keys.lines(prefix), eventId);
  }

  /** A page of the history lines as HSCAN walks the hash (a line may come twice); `after`: the previous page's cursor. */
  async historyLines(
    prefix: string,
    after: string | null,
    limit: number,
  ): Promise<{ lines: Array<{ eventId: string; taskId: string }>; next: string | null }> {
    const [next, flat] = await this.client.hscan(this.keys.lines(prefix), after ?? '0', 'COUNT', limit);
    const lines: Array<{ eventId: string; taskId: string }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) lines.push({ eventId: flat[i], taskId: flat[i + 1] });
    return { lines, next: next === '0' ? null : next };
  }

  /**
   * A page of a task list, newest first. An entry without its record is passed over (the page is filled from the
   * entries after it) and told (onDangling): it was passed over without a word, a task fewer and nothing said why.
   */
  async list(prefix: string, identity: string, query: TaskListQuery): Promise<TaskViewPage> {
    const key = this.keys.list(prefix, query.list, identity);
    const recordsKey = this.keys.records(prefix);
    const states = query.states && query.states.length > 0 ? new Set(query.states) : null;
    const tasks: TaskView[] = [];
    let max = query.before === null ? '+' : `(${padPosition(BigInt(query.before))}`;
    // Filtered by state: read a few pages of ids until the page is full (a state filter skips what does not match).
    const chunk = Math.max(query.limit + 1, states ? 4 * query.limit : 0);
    for (;;) {
      const members = await this.client.zrevrangebylex(key, max, '-', 'LIMIT', 0, chunk);
      if (members.length === 0) return { tasks, nextBefore: null };
      const ids = members.map((member) => member.slice(member.indexOf(':') + 1));
      const records = await this.client.hmget(recordsKey, ...ids);
      for (const [index, json] of records.entries()) {
        if (json === null) {
          this.onDangling({ taskId: ids[index], listKey: key, recordsKey });
          continue;
        }
        const task = JSON.parse(json) as TaskView;
        if (states && !states.has(task.state)) continue;
        if (tasks.length === query.limit) return { tasks, nextBefore: tasks[tasks.length - 1].position };
        tasks.push(task);
      }
      if (members.length < chunk) return { tasks, nextBefore: null };
      max = `(${members[members.length - 1].slice(0, members[members.length - 1].indexOf(':'))}`;
    }
  }

  async waiting(prefix: string, identity: string): Promise<Pick<HeartbeatCounts, 'tasksWaiting' | 'tasksWaitingSince'>> {
    const [count, since] = await Promise.all([
      this.client.hget(this.keys.waiting(prefix), identity),
      this.client.hget(this.keys.waitingSince(prefix), identity),
    ]);
    return { tasksWaiting: Number(count ?? 0), tasksWaitingSince: since === null ? null : waitingSinceOf(since) };
  }

  async waitingIdentities(prefix: string): Promise<string[]> {
    return this.client.hkeys(this.keys.waiting(prefix));
  }

  /** Whether `identity` is one of waitingIdentities. */
  async isWaitedOn(prefix: string, identity: string): Promise<boolean> {
    return (await this.client.hexists(this.keys.waiting(prefix), identity)) === 1;
  }

  /**
   * The open tasks due by `now` (after `after`, when given), at most `limit`, the earliest due first. The apply script writes a timed entry and its record together, so
   * an entry without a record is a Redis changed by hand or partly restored: the sweeper cannot end that task. It was
   * skipped without a word, and it kept a place of the `limit` (enough of them and no due task was ever swept): it is
   * now told (onDangling) and read past.
   */
  async due(prefix: string, now: string, limit: number, after?: string): Promise<TaskView[]> {
    const timedKey = this.keys.timed(prefix);
    const recordsKey = this.keys.records(prefix);
    const from = after === undefined ? '-inf' : `(${Date.parse(after)}`;
    const tasks: TaskView[] = [];
    for (let offset = 0; tasks.length < limit;) {
      const ids = await this.client.zrangebyscore(timedKey, from, Date.parse(now), 'LIMIT', offset, limit - tasks.length);
      if (ids.length === 0) break;
      offset += ids.length;
      const records = await this.client.hmget(recordsKey, ...ids);
      records.forEach((json, index) => {
        if (json !== null) tasks.push(JSON.parse(json) as TaskView);
        else this.onDangling({ taskId: ids[index], timedKey, recordsKey });
      });
    }
    return tasks;
  }
}
