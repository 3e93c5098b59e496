/**
 * Turns projected events into calls of the apply script (pure, no I/O).
 * Changes are grouped by hash tag: one block per agent touched plus the global
 * block (registry, identities, checkpoint). On a single node one call carries
 * every block; for Redis Cluster each block is its own call (see redisKeys.ts).
 */
import type { InboxEntryFields, ProjectedEvent, ViewChange, WakeEvent } from '../../projections/viewChanges';
import { padPosition, type RedisKeys } from './redisKeys';

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
}

/**
 * Stored form of an inbox entry (the recipient's copy of the fields it filters
 * on) and of a sent message's summary (the sender's outbox entry):
 * `<position>|<priority>|<sentAt>|<json>`; the scripts read the head, the reader the JSON.
 */
export function storedValue(position: string, fields: { priority: string; sentAt: string }, json: string): string {
  return `${position}|${fields.priority}|${fields.sentAt}|${json}`;
}

/** The wake JSON around its unread count, which only the script knows (after the change). */
function wakeTemplate(position: bigint, recipient: string, entry: InboxEntryFields, isBroadcast: boolean): [string, string] {
  const wake: Omit<WakeEvent, 'unreadCount' | 'position'> = {
    type: 'wake/message', messageId: entry.messageId, from: entry.from, to: entry.to, recipient,
    subject: entry.subject, priority: entry.priority, isBroadcast,
  };
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
export function planEvents(events: readonly ProjectedEvent[], wakes = true): ApplyPlan {
  const plan: ApplyPlan = { lastPosition: '', global: { ops: [], count: 0 }, agents: new Map() };
  const agent = (identity: string): Block => {
    let block = plan.agents.get(identity);
    if (!block) plan.agents.set(identity, (block = { ops: [], count: 0 }));
    return block;
  };
  const push = (block: Block, ...op: string[]) => {
    block.ops.push(...op);
    block.count++;
  };
  for (const event of events) {
    const pos = padPosition(event.position);
    // A direct message's inbox entry carries the whole summary (same event), so listing it needs no second read.
    const summaries = new Map<string, string>();
    for (const change of event.changes) {
      if (change.kind === 'messageRecorded') summaries.set(change.summary.messageId, JSON.stringify(change.summary));
    }
    for (const change of event.changes) planChange(event.position, pos, change, wakes, summaries, plan.global, agent, push);
    plan.lastPosition = pos;
  }
  // Every identity with views (memory: any inbox touched), once per call: SADD is idempotent.
  if (plan.agents.size > 0) push(plan.global, 'ids', plan.lastPosition, [...plan.agents.keys()].join(' '));
  return plan;
}

function planChange(position: bigint, pos: string, change: ViewChange, wakes: boolean, summaries: Map<string, string>,
  global: Block, agent: (identity: string) => Block,
  push: (block: Block, ...op: string[]) => void): void {
  switch (change.kind) {
    case 'agentRegistered':
      push(global, 'reg', pos, change.identity, JSON.stringify({ role: change.role, registeredAt: change.registeredAt }));
      return;
    case 'agentRetired':
      push(global, 'ret', pos, change.identity, change.retiredAt);
      return;
    case 'messageRecorded':
      push(agent(change.summary.from), 'S', pos, change.summary.messageId,
        storedValue(pos, change.summary, summaries.get(change.summary.messageId)!));
      return;
    case 'outboxAdded':
      push(agent(change.sender), 'O', pos, change.entry.messageId, change.entry.sentAt);
      return;
    case 'inboxAdded': {
      const [head, tail] = change.wake && wakes ? wakeTemplate(position, change.recipient, change.entry, change.isBroadcast) : ['', ''];
      push(agent(change.recipient), 'I', pos, change.entry.messageId,
        storedValue(pos, change.entry, summaries.get(change.entry.messageId) ?? JSON.stringify(change.entry)), change.entry.priority, head, tail);
      return;
    }
    case 'receiptRead':
      push(agent(change.recipient), 'R', pos, change.messageId, change.readAt);
      return;
    case 'inboxArchived':
      push(agent(change.recipient), 'A', pos, change.messageId, change.archivedAt);
      return;
    default: {
      const unexpected: never = change;
      throw new Error(`Unknown view change ${JSON.stringify(unexpected)}`);
    }
  }
}

function header(context: CallContext, lastPosition: string, blockCount: number): string[] {
  return [context.flags, context.expected, context.prefix, context.keys.defaultPrefix, lastPosition, String(blockCount)];
}

function appendGlobal(call: ScriptCall, context: CallContext, block: Block): void {
  call.args.push('g', String(call.keys.length + 1), '', String(block.count), ...block.ops);
  call.keys.push(...context.keys.globalKeys(context.prefix));
}

function appendAgent(call: ScriptCall, context: CallContext, identity: string, block: Block): void {
  call.args.push('a', String(call.keys.length + 1), context.keys.wakeChannel(identity), String(block.count), ...block.ops);
  call.keys.push(context.keys.agent(context.prefix, identity, 'inbox'));
}

/** Single node: every block in one call, so the events and the checkpoint commit together. */
export function singleCall(plan: ApplyPlan, context: CallContext): ScriptCall {
  const call: ScriptCall = { keys: [], args: header(context, plan.lastPosition, plan.agents.size + 1) };
  appendGlobal(call, context, plan.global);
  for (const [identity, block] of plan.agents) appendAgent(call, context, identity, block);
  return call;
}

/** Cluster: one call per agent tag (no global keys), then the global block with the checkpoint. */
export function perTagCalls(plan: ApplyPlan, context: CallContext): { agents: ScriptCall[]; commit: ScriptCall } {
  const agentFlags = context.flags.replace(/[cw]/g, '');
  const agents = [...plan.agents].map(([identity, block]) => {
    const call: ScriptCall = { keys: [], args: header({ ...context, flags: agentFlags }, plan.lastPosition, 1) };
    appendAgent(call, context, identity, block);
    return call;
  });
  const commit: ScriptCall = { keys: [], args: header(context, plan.lastPosition, 1) };
  appendGlobal(commit, context, plan.global);
  return { agents, commit };
}

/** A call that writes nothing: it reports the stored checkpoint (and checks rewind and generation when asked). */
export function checkCall(context: CallContext): ScriptCall {
  const call: ScriptCall = { keys: [], args: header({ ...context, flags: context.flags.includes('c') ? 'c' : '' }, '', 1) };
  appendGlobal(call, context, { ops: [], count: 0 });
  return call;
}
