/**
 * Turns projected events into calls of the apply script (pure, no I/O).
 * Changes are grouped by hash tag: one block per agent touched plus the global
 * block (registry, identities, checkpoint). On a single node one call carries
 * every block; for Redis Cluster each block is its own call (see redisKeys.ts).
 */
import type { InboxEntryFields, ProjectedEvent, ViewChange } from '../../projections/viewChanges';
import { wakeDue, wakeOf } from '../../projections/readModel/wakes';
import { padPosition, type RedisKeys } from './redisKeys';
import { ledgerOps } from './redisLedger';
import { storedValue } from './redisStoredValue';
import type { TaskOps } from './redisTaskViews';

interface Block {
  ops: string[];
  count: number;
}

export interface ApplyPlan {
  lastPosition: string;
  global: Block;
  agents: Map<string, Block>;
}

export interface ScriptCall {
  keys: string[];
  args: string[];
}

export interface CallContext {
  keys: RedisKeys;
  prefix: string;
  /** 'c' check rewind and generation, 'p' publish wakes, 'w' write global ops and checkpoint. */
  flags: string;
  expected: string;
  /** Each chunk of a call also expects the chunk before it (redisApplier.ts, a generation being built). */
  contiguous?: boolean;
  /** The log the writer applies for; checked against the generation's by calls with 'c' ('' or absent: unbound). */
  logIdentity?: string;
  /** The task views' ops for the events of the call (see redisTaskViews.ts). */
  taskOps?: TaskOps;
  /** The writer's projector lease, `<node>:<token>`, checked by calls with 'c' ('' or absent: an unfenced writer). */
  fenceToken?: string;
}

/** The wake JSON around its unread count, which only the script knows (after the change). */
function wakeTemplate(position: bigint, recipient: string, entry: InboxEntryFields, isBroadcast: boolean): [string, string] {
  // The read model's payload (wakes.ts), less the two fields that close it: the script fills in the unread count.
  const { unreadCount: _unread, position: _position, ...wake } = wakeOf(recipient, entry, isBroadcast, 0, position);
  return [`${JSON.stringify(wake).slice(0, -1)},"unreadCount":`, `,"position":${JSON.stringify(position.toString())}}`];
}

/**
 * Keeps only events past `after` and past every earlier event of the batch, as
 * the memory store does: a redelivered or late event changes nothing.
 */
export function inLogOrder(batch: readonly ProjectedEvent[], after: bigint | null): ProjectedEvent[] {
  const kept: ProjectedEvent[] = [];
  let last = after;
  for (const event of batch) {
    if (last !== null && event.position <= last) continue;
    kept.push(event);
    last = event.position;
  }
  return kept;
}

/** `wakes: false` (a rebuild) leaves the wake payloads out: the script would not publish them. */
/** `taskOps`: the task views' changes for these events (redisTaskViews.ts), written in the global block, in log order. */
export function planEvents(events: readonly ProjectedEvent[], wakes = true, taskOps?: TaskOps): ApplyPlan {
  const plan: ApplyPlan = { lastPosition: '', global: { ops: [], count: 0 }, agents: new Map() };
  const agent = (identity: string): Block => {
    let block = plan.agents.get(identity);
    if (!block) plan.agents.set(identity, (block = { ops: [], count: 0 }));
    return block;
  };
  const push = (block: Block, ...op: string[]) => {
    pushAll(block.ops, op);
    block.count++;
  };
  for (const event of events) {
    const pos = padPosition(event.position);
    // A direct message's inbox entry carries the whole summary (same event), so listing it needs no second read;
    // and a summary with its own outbox entry is one op ('M').
    const summaries = new Map<string, string>();
    const outboxes = new Set<string>();
    for (const change of event.changes) {
      if (change.kind === 'messageRecorded') summaries.set(change.summary.messageId, JSON.stringify(change.summary));
      if (change.kind === 'outboxAdded') outboxes.add(`${change.sender} ${change.entry.messageId}`);
    }
    const context: EventContext = { position: event.position, pos, wakes, summaries, outboxes };
    for (const change of event.changes) {
      planChange(context, change, plan.global, agent, push);
      for (const op of ledgerOps(change, event.position, wakes)) push(plan.global, op[0], pos, ...op.slice(1)); // redisLedger.ts
    }
    for (const op of taskOps?.get(pos) ?? []) push(plan.global, op[0], pos, ...op.slice(1));
    plan.lastPosition = pos;
  }
  // Every identity with views (memory: any inbox touched), once per call: SADD is idempotent.
  if (plan.agents.size > 0) push(plan.global, 'ids', plan.lastPosition, [...plan.agents.keys()].join(' '));
  return plan;
}

interface EventContext {
  position: bigint;
  pos: string;
  wakes: boolean;
  summaries: Map<string, string>;
  /** `<sender> <messageId>` of the outbox entries this event adds. */
  outboxes: Set<string>;
}

function planChange(
  { position, pos, wakes, summaries, outboxes }: EventContext,
  change: ViewChange,
  global: Block,
  agent: (identity: string) => Block,
  push: (block: Block, ...op: string[]) => void,
): void {
  switch (change.kind) {
    case 'agentRegistered':
      push(global, 'reg', pos, change.identity, JSON.stringify({ role: change.role, registeredAt: change.registeredAt }));
      return;
    case 'agentRetired':
      push(global, 'ret', pos, change.identity, change.retiredAt);
      return;
    case 'messageRecorded': {
      const { summary } = change;
      const value = storedValue(pos, summary, summaries.get(summary.messageId)!);
      if (outboxes.has(`${summary.from} ${summary.messageId}`))
        push(agent(summary.from), 'M', pos, summary.messageId, value, summary.sentAt);
      else push(agent(summary.from), 'S', pos, summary.messageId, value);
      return;
    }
    case 'outboxAdded':
      if (!summaries.has(change.entry.messageId) || change.sender !== change.entry.from) {
        push(agent(change.sender), 'O', pos, change.entry.messageId, change.entry.sentAt);
      }
      return;
    case 'inboxAdded': {
      const value = storedValue(pos, change.entry, summaries.get(change.entry.messageId) ?? JSON.stringify(change.entry));
      if (wakes && wakeDue(change.recipient, change.entry, change.isBroadcast, change.wakeSuppressed)) {
        push(
          agent(change.recipient),
          'W',
          pos,
          change.entry.messageId,
          value,
          change.entry.priority,
          ...wakeTemplate(position, change.recipient, change.entry, change.isBroadcast),
        );
      } else {
        push(agent(change.recipient), 'I', pos, change.entry.messageId, value, change.entry.priority);
      }
      return;
    }
    case 'receiptRead':
      push(agent(change.recipient), 'R', pos, change.messageId, change.readAt);
      return;
    case 'inboxArchived':
      push(agent(change.recipient), 'A', pos, change.messageId, change.archivedAt);
      return;
    case 'inboxUnarchived':
      push(agent(change.recipient), 'U', pos, change.messageId, change.unarchivedAt);
      return;
    case 'entrySeen':
      push(agent(change.recipient), 'V', pos, change.messageId, change.seenAt);
      return;
    case 'taskOpened':
    case 'taskChanged':
      return; // planned by the task rules in Node (redisTaskViews.ts), passed in as taskOps
    case 'ledgerOpened':
    case 'wakeObserved':
    case 'wakeEscalated':
    case 'replyRequested':
    case 'replyOverdue':
      return; // the ledger's ops (redisLedger.ts), planned beside every change
    default: {
      const unexpected: never = change;
      throw new Error(`Unknown view change ${JSON.stringify(unexpected)}`);
    }
  }
}

/** A call with the global block (when given) first, then the agents' blocks, one key each. */
function call(context: CallContext, lastPosition: string, global: Block | null, agents: Iterable<[string, Block]>): ScriptCall {
  const result: ScriptCall = {
    keys: global ? context.keys.globalKeys(context.prefix) : [],
    args: [
      context.flags,
      context.expected,
      context.prefix,
      context.keys.defaultPrefix,
      lastPosition,
      context.keys.wakeChannel(''),
      global ? String(global.count) : '',
    ],
  };
  if (global) pushAll(result.args, global.ops);
  for (const [identity, block] of agents) {
    result.keys.push(context.keys.agent(context.prefix, identity, 'inbox'));
    result.args.push(String(block.count));
    pushAll(result.args, block.ops);
  }
  // Read by the script as ARGV[#ARGV - 1] and ARGV[#ARGV].
  if (context.flags.includes('c')) result.args.push(context.logIdentity ?? '', context.fenceToken ?? '');
  return result;
}

/** Appends without spreading (a spread of thousands of arguments can overflow the stack). */
function pushAll(target: string[], items: readonly string[]): void {
  for (const item of items) target.push(item);
}

/** Single node: every block in one call, so the events and the checkpoint commit together. */
export function singleCall(plan: ApplyPlan, context: CallContext): ScriptCall {
  return call(context, plan.lastPosition, plan.global, plan.agents);
}

/**
 * Cluster: one call per agent tag (no global keys), then the global block with the checkpoint.
 * The agent calls cannot read the lease's token (another slot), so they are not fenced: a deposed
 * writer paused between its checking call and these may still land them, after its successor applied
 * later events. The calls carry the changes the log dictates for those positions, and each agent's
 * keys keep the last position applied to them (redisApplyScript.ts, `applied`): a call changes
 * nothing at or below it, so whichever writer lands first, the other's copy changes nothing, and a
 * late one cannot re-apply an archive or an unarchive over a later one (those are not written only if
 * absent: an archived mark deleted by a later unarchive was written again, and the entry left the
 * inbox). The global call, which moves the checkpoint and carries registry and task changes, is fenced.
 */
export function perTagCalls(plan: ApplyPlan, context: CallContext): { agents: ScriptCall[]; commit: ScriptCall } {
  const agentContext = { ...context, flags: context.flags.replace(/[cw]/g, '') };
  return {
    agents: [...plan.agents].map((entry) => call(agentContext, plan.lastPosition, null, [entry])),
    commit: call(context, plan.lastPosition, plan.global, []),
  };
}

/** A call that writes nothing: it reports the stored checkpoint (and checks rewind and generation when asked). */
export function checkCall(context: CallContext): ScriptCall {
  return call({ ...context, flags: context.flags.includes('c') ? 'c' : '' }, '', { ops: [], count: 0 }, []);
}
