/**
 * The pure heartbeat decider: (agents, state, now, policy) -> one decision per
 * agent, and `recordNudge` to evolve the state once a nudge went out. No I/O,
 * no clock: the daemon passes `now` in.
 *
 * The cooldown key is the unread-set signature (unread count + newest unread
 * message). New mail always lands newest in an inbox, so if the count and the
 * newest unread message are unchanged, no mail arrived that is still unread
 * and none left: it is the same set, and it never nudges twice. Tasks waiting
 * on the agent join it by count and by which tasks they are (a task that ended
 * and a new one come between two ticks leave the count as it was). A set that
 * only shrank since the last nudge (a read, an archive, a task finished), or got
 * back what left it (an unarchive), holds nothing newer than what that nudge
 * covered (`through`): the same set too.
 */
import { createHash } from 'node:crypto';
import type { HeartbeatCounts } from '../projections/projectionStore';

export interface NudgePolicy {
  /** An agent that sent or read within this long is active and left alone. */
  idleMs: number;
  /** Minimum gap between two nudges to one agent, even when its unread set changed (no floods). */
  cooldownMs: number;
  /** After a wake event to the agent, give it this long to react before nudging. */
  wakeGraceMs: number;
  optedOut: ReadonlySet<string>;
}

/** One agent's heartbeat counts plus what the daemon learned about it. */
export interface AgentSnapshot extends HeartbeatCounts {
  /** Newest unread message id; null when not looked up (the signature then falls back to the oldest unread time). */
  newestUnreadId: string | null;
  /** When the newest unread message was sent (absent or null: not looked up). */
  newestUnreadSentAt?: string | null;
  /** When the daemon last saw a wake event for this agent (ms since epoch), from the wake bus. */
  lastWakeAt: number | null;
  /** Retired agents can no longer authenticate: nudging them would reach nobody. */
  retired: boolean;
}

export interface NudgeRecord {
  signature: string;
  at: number;
  /**
   * What the nudge covered: its newest unread message (id and send time) and where the last task to begin waiting on
   * the agent stood (tasksWaitingSince's position), null for a part it had none of. Absent when not known (a record of
   * an earlier version, or a set the nudge did not look up): only the signature then tells the same set.
   */
  through?: NudgeCovered;
}

export interface NudgeCovered {
  mail: { id: string; sentAt: string } | null;
  tasks: number | null;
}

/** Per agent: the last nudge that went out. */
export type NudgeState = ReadonlyMap<string, NudgeRecord>;

/**
 * `projector_absent` is never the decider's: the daemon gives it to an agent due a nudge while no projector keeps the
 * views (no agent can read its mail then), and holds that nudge.
 */
export type Verdict =
  'nudge' | 'no_mail' | 'retired' | 'opted_out' | 'active' | 'wake_grace' | 'same_set' | 'cooldown' | 'projector_absent';

export interface Nudge {
  type: 'heartbeat/nudge';
  /** Stable for one agent and unread set: receivers can de-duplicate retries and restarts. */
  nudgeId: string;
  identity: string;
  unread: number;
  /**
   * The same count under the name every other payload gives it (wake events' and GET /v1/messages' `unreadCount`):
   * `unread` alone made a receiver written against those read undefined. Both are sent; `unread` stays for receivers
   * that read it.
   */
  unreadCount: number;
  /** Tasks waiting on the agent: held and Submitted/Working, or sent and asking for input. */
  tasksWaiting: number;
  byPriority: HeartbeatCounts['byPriority'];
  oldestUnreadAt: string | null;
  newestUnreadId: string | null;
  lastActivityAt: string | null;
  /** Null when the agent has never sent or read anything. */
  idleForMs: number | null;
  at: string;
  /**
   * Absent: the unread set itself. 'unwoken': `messageIds` woke none of their recipients within the wake SLA
   * (issue 13, each message escalated once; one nudge per recipient per tick carries every message the tick escalated
   * to it, whatever the cooldown); 'reply-overdue': the agent has not answered `messageIds` in their threads by the
   * time their senders expected (each once, gathered the same way; the sender gets a reply-overdue wake).
   */
  reason?: 'unwoken' | 'reply-overdue';
  /** With `reason`: the first of `messageIds` (for receivers that read one message). */
  messageId?: string;
  /** With `reason`: every message this nudge is about, oldest first, and how many. */
  messageIds?: string[];
  messageCount?: number;
}

export interface Decision {
  identity: string;
  verdict: Verdict;
  signature: string;
  /** What a nudge of this set covers (recorded with it), when known. */
  through?: NudgeCovered;
  nudge?: Nudge;
}

/**
 * Tasks waiting on the agent (issue 12) join the signature: a new task to work or to answer is a new set. By their
 * count and by the last change that made one begin waiting on the agent (tasksWaitingSince's log position, kept by the
 * views): one task ended and another come between two ticks, or one that left the agent (asked its sender) and came
 * back, is a new set too (by the count alone it was the same set, never told; and a receiver de-duplicating by nudgeId
 * dropped it); a lease renewed or an artifact added is not.
 */
export const unreadSetSignature = (
  agent: Pick<AgentSnapshot, 'unread' | 'newestUnreadId' | 'oldestUnreadAt'> & {
    tasksWaiting?: number;
    tasksWaitingSince?: AgentSnapshot['tasksWaitingSince'];
  },
): string =>
  `${agent.unread}|${agent.newestUnreadId ?? `oldest:${agent.oldestUnreadAt ?? '-'}`}${agent.tasksWaiting ? `|tasks:${agent.tasksWaiting}${agent.tasksWaitingSince ? `@${agent.tasksWaitingSince.position}` : ''}` : ''}`;

/**
 * A signature of the form before READ_MODEL_VERSION 7, which held which tasks wait as a digest of their ids
 * (`|tasks:<n>:<16 hex>`): kept in the records beside a Redis heartbeat lease across an upgrade, it never equals this
 * version's for the same set (see the daemon's sharedState, which judges such a record by its time instead).
 */
export const isEarlierSignature = (signature: string): boolean => /\|tasks:\d+:[0-9a-f]{16}$/.test(signature);

const idleFor = (agent: HeartbeatCounts, now: number): number | null =>
  agent.lastActivityAt === null ? null : now - Date.parse(agent.lastActivityAt);

/**
 * Whether an agent can be nudged at all, judged from its counts alone. The
 * daemon uses it to look up the newest unread message only for these agents.
 */
type Screened = HeartbeatCounts & Pick<AgentSnapshot, 'lastWakeAt' | 'retired'>;

export function mayNudge(agent: Screened, now: number, policy: NudgePolicy): boolean {
  return screen(agent, now, policy) === null;
}

function screen(agent: Screened, now: number, policy: NudgePolicy): Verdict | null {
  if (agent.unread <= 0 && !(agent.tasksWaiting > 0)) return 'no_mail'; // tasks waiting on it count as mail (issue 12)
  if (agent.retired) return 'retired';
  if (policy.optedOut.has(agent.identity)) return 'opted_out';
  const idle = idleFor(agent, now);
  if (idle !== null && idle < policy.idleMs) return 'active';
  if (agent.lastWakeAt !== null && now - agent.lastWakeAt < policy.wakeGraceMs) return 'wake_grace';
  return null;
}

/** What a nudge of this agent's set would cover; undefined when its newest unread message was not looked up. */
export function coveredBy(
  agent: Pick<AgentSnapshot, 'unread' | 'newestUnreadId' | 'newestUnreadSentAt' | 'tasksWaiting' | 'tasksWaitingSince'>,
): NudgeCovered | undefined {
  const mail = agent.unread > 0 ? agent.newestUnreadId : null;
  const tasks = agent.tasksWaiting > 0 ? (agent.tasksWaitingSince?.position ?? null) : null;
  if ((agent.unread > 0 && !agent.newestUnreadSentAt) || (agent.tasksWaiting > 0 && tasks === null)) return undefined;
  return { mail: mail === null ? null : { id: mail, sentAt: agent.newestUnreadSentAt! }, tasks };
}

/**
 * Nothing in the set is newer than what the last nudge covered: its newest unread message is that nudge's, or one sent
 * before it (the newer ones were read or archived since), and no task began waiting on the agent after. A send at the
 * same millisecond as the nudge's newest is not taken as covered.
 */
function covers(through: NudgeCovered | undefined, now: NudgeCovered | undefined): boolean {
  if (through === undefined || now === undefined) return false;
  const mail =
    now.mail === null ||
    (through.mail !== null && (now.mail.id === through.mail.id || Date.parse(now.mail.sentAt) < Date.parse(through.mail.sentAt)));
  const tasks = now.tasks === null || (through.tasks !== null && now.tasks <= through.tasks);
  return mail && tasks;
}

export function decideAgent(agent: AgentSnapshot, state: NudgeState, now: number, policy: NudgePolicy): Decision {
  const signature = unreadSetSignature(agent);
  const through = coveredBy(agent);
  const decision = (verdict: Verdict): Decision => ({
    identity: agent.identity,
    verdict,
    signature,
    ...(through && { through }),
  });
  const screened = screen(agent, now, policy);
  if (screened !== null) return decision(screened);
  const last = state.get(agent.identity);
  if (last?.signature === signature || covers(last?.through, through)) return decision('same_set');
  if (last && now - last.at < policy.cooldownMs) return decision('cooldown');
  const nudgeId = createHash('sha256').update(`${agent.identity}\n${signature}`).digest('hex').slice(0, 32);
  return {
    ...decision('nudge'),
    nudge: {
      type: 'heartbeat/nudge',
      nudgeId,
      identity: agent.identity,
      unread: agent.unread,
      unreadCount: agent.unread,
      tasksWaiting: agent.tasksWaiting,
      byPriority: { ...agent.byPriority },
      oldestUnreadAt: agent.oldestUnreadAt,
      newestUnreadId: agent.newestUnreadId,
      lastActivityAt: agent.lastActivityAt,
      idleForMs: idleFor(agent, now),
      at: new Date(now).toISOString(),
    },
  };
}

export function decideNudges(agents: readonly AgentSnapshot[], state: NudgeState, now: number, policy: NudgePolicy): Decision[] {
  return agents.map((agent) => decideAgent(agent, state, now, policy));
}

/** The record of a decision's nudge sent at `now`: its set's signature, and what it covered. */
export const nudgeRecord = ({ signature, through }: Decision, now: number): NudgeRecord => ({
  signature,
  at: now,
  ...(through && { through }),
});

/** Evolve: the state after these decisions' nudges went out at `now`. */
export function recordNudges(state: NudgeState, sent: readonly Decision[], now: number): NudgeState {
  const next = new Map(state);
  for (const decision of sent) next.set(decision.identity, nudgeRecord(decision, now));
  return next;
}

/**
 * What `rememberedNudges` knows of an agent: its unread set, when its newest unread message was sent, and when a task
 * last began waiting on it (its heartbeat counts' tasksWaitingSince).
 */
export type RememberedAgent = Pick<
  AgentSnapshot,
  'identity' | 'unread' | 'tasksWaiting' | 'tasksWaitingSince' | 'newestUnreadId' | 'oldestUnreadAt'
> & {
  newestUnreadSentAt: string | null;
};

/**
 * A daemon's state at its first tick, from the log's record of earlier daemons' nudges (each identity's last one:
 * a WakeObserved via a nudge target, in the views). A daemon that shares no records (no Redis: `mailbox heartbeat
 * --once` run by cron, or a restart) remembered nothing, so its first tick nudged every idle agent again, its unread
 * set unchanged. As the log tells it: an agent whose newest unread message was sent by its last nudge, and on which
 * no task began waiting since (tasksWaitingSince: a task's change that made it wait on the agent, not a lease renewed
 * or an artifact added), has the set it was nudged about then (or that set less what it read or finished since), so
 * `same_set`; one with newer mail, or a task that began waiting on it since (a new task, or one back on it after it
 * asked its sender), has a new set, nudged once the cooldown since that nudge has passed. A nudge about tasks alone
 * is recorded under the task that began waiting last (tasksWaitingSince's task). Agents never nudged, and those this daemon already has a record of, are left as they are.
 */
export function rememberedNudges(
  state: NudgeState,
  agents: readonly RememberedAgent[],
  lastNudges: ReadonlyMap<string, { at: string }>,
): NudgeState {
  const next = new Map(state);
  const by = (time: string | null, at: number) => time !== null && Date.parse(time) <= at;
  for (const agent of agents) {
    const last = lastNudges.get(agent.identity);
    const at = last === undefined ? NaN : Date.parse(last.at);
    if (next.has(agent.identity) || Number.isNaN(at)) continue;
    const sameMail = !(agent.unread > 0) || by(agent.newestUnreadSentAt, at);
    const sameTasks = !(agent.tasksWaiting > 0) || by(agent.tasksWaitingSince?.at ?? null, at);
    const sameSet = sameMail && sameTasks;
    const through = sameSet ? coveredBy(agent) : undefined; // what is there now is all the last nudge covered
    next.set(agent.identity, {
      signature: sameSet ? unreadSetSignature(agent) : `nudged before ${last!.at}`,
      at,
      ...(through && { through }),
    });
  }
  return next;
}
