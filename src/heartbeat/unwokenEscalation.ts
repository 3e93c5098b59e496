/**
 * The unwoken alarm's escalation (issue 13). Each tick: count the messages
 * that expected a wake and woke none of their recipients within the wake SLA
 * (a gauge), and escalate each one not escalated yet through its recipients'
 * nudge targets, once. Once, also with several daemons and across restarts:
 * an escalation is first claimed by creating the message's escalation stream
 * (WakeEscalated, expected revision 'no_stream'); a daemon whose append
 * conflicts lost the claim and sends nothing. The claim is written before the
 * nudges go out, so a daemon killed in between has escalated without nudging
 * (at most once, never twice); the log says so. A nudge a target delivered
 * wakes the recipient: recorded as WakeObserved via that target.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { ConcurrencyConflict } from '../errors';
import { deterministicEventId } from '../events/eventIds';
import { escalationStream } from '../events/streams';
import { WAKE_VIAS } from '../events/storedShapes';
import type { NewEvent, WakeVia } from '../events/types';
import { CURRENT_SCHEMA_VERSION } from '../events/upcasters';
import type { UnwokenMessage } from '../projections/readModel/ledger';
import type { WakeRecorder } from '../application/wakeRecorder';
import type { EventStore } from '../events/eventStore';
import type { ProjectionStore } from '../projections/projectionStore';
import type { HeartbeatMetrics } from './heartbeatMetrics';
import type { Nudge } from './nudgeDecider';
import type { DeliveryReport, NudgeDispatcher } from './nudgeDispatcher';

/** Escalations started per tick at most (the rest wait for the next tick, oldest first). */
const MAX_PER_TICK = 100;
const RECIPIENT_PAGE = 1000;

export interface EscalationReport {
  /** Unwoken messages past the SLA, escalated or not. */
  unwoken: number;
  /** Messages this tick escalated. */
  escalated: string[];
}

export class UnwokenEscalation {
  /** Claimed by this daemon; the views may not show the claim yet (the next claim would conflict anyway). */
  private readonly claimed = new Set<string>();

  constructor(
    private readonly sources: { eventStore: EventStore; projections: ProjectionStore },
    private readonly dispatcher: NudgeDispatcher,
    private readonly recorder: WakeRecorder,
    private readonly metrics: HeartbeatMetrics,
    private readonly logger: Logger,
    private readonly slaMs: number,
    /** Whom a nudge may reach: registered, not retired, not opted out (the others are listed in the claim, not nudged). */
    private readonly nudgeable: (identity: string) => boolean,
  ) {}

  async run(now: number): Promise<EscalationReport> {
    const sentBefore = new Date(now - this.slaMs).toISOString();
    const { projections } = this.sources;
    const all = await projections.unwoken({ sentBefore, limit: 0, pendingOnly: false });
    this.metrics.unwoken.set(all.count);
    const pending = await projections.unwoken({ sentBefore, limit: MAX_PER_TICK, pendingOnly: true });
    const escalated: string[] = [];
    for (const message of pending.messages) {
      if (this.claimed.has(message.messageId)) continue;
      const recipients = await this.unwokenRecipients(message.messageId);
      if (!(await this.claim(message, recipients, now))) continue;
      if (this.claimed.size >= 10_000) this.claimed.clear();
      this.claimed.add(message.messageId);
      escalated.push(message.messageId);
      this.metrics.escalations.inc();
      this.logger.error(
        { alarm: 'message_unwoken', ...message, slaMs: this.slaMs, recipients },
        'ALARM message woke none of its recipients within the wake SLA; escalating through their nudge targets (once)',
      );
      for (const recipient of recipients.filter(this.nudgeable)) {
        const nudge = await this.nudgeFor(recipient, message, now);
        this.dispatcher.dispatch(nudge, (report) => this.delivered(report, message.messageId));
      }
    }
    return { unwoken: all.count, escalated };
  }

  /** The recipients with no wake observed (all of them, while the message is unwoken), in identity order. */
  private async unwokenRecipients(messageId: string): Promise<string[]> {
    const recipients: string[] = [];
    let after: string | null = null;
    do {
      const page = await this.sources.projections.deliveryLedger(messageId, { after, limit: RECIPIENT_PAGE });
      if (!page) return recipients;
      for (const row of page.rows) if (row.woken === null) recipients.push(row.recipient);
      after = page.nextAfter;
    } while (after !== null);
    return recipients;
  }

  /** Creates the message's escalation stream; false when another daemon (or an earlier run) did. */
  private async claim(message: UnwokenMessage, recipients: string[], now: number): Promise<boolean> {
    const commandId = randomUUID(); // this daemon's own attempt: another daemon's append has other ids, so it conflicts
    const at = new Date(now).toISOString();
    const event: NewEvent = {
      eventId: deterministicEventId(commandId, 0),
      type: 'WakeEscalated',
      data: { messageId: message.messageId, recipients, slaMs: this.slaMs, escalatedAt: at },
      metadata: {
        commandId,
        correlationId: message.messageId,
        causationId: message.messageId,
        actor: 'system:heartbeat',
        at,
        schemaVersion: CURRENT_SCHEMA_VERSION,
      },
    };
    try {
      await this.sources.eventStore.append(escalationStream(message.messageId), [event], 'no_stream');
      return true;
    } catch (error) {
      if (error instanceof ConcurrencyConflict) return false;
      throw error;
    }
  }

  private async nudgeFor(recipient: string, message: UnwokenMessage, now: number): Promise<Nudge> {
    const counts = await this.sources.projections.heartbeat(recipient);
    return {
      type: 'heartbeat/nudge',
      nudgeId: `unwoken:${message.messageId}:${recipient}`,
      identity: recipient,
      unread: counts.unread,
      tasksWaiting: counts.tasksWaiting,
      byPriority: { ...counts.byPriority },
      oldestUnreadAt: counts.oldestUnreadAt,
      newestUnreadId: null,
      lastActivityAt: counts.lastActivityAt,
      idleForMs: counts.lastActivityAt === null ? null : now - Date.parse(counts.lastActivityAt),
      at: new Date(now).toISOString(),
      reason: 'unwoken',
      messageId: message.messageId,
    };
  }

  private delivered(report: DeliveryReport, messageId: string): void {
    const via = wakeVia(report);
    if (via !== null) this.recorder.observed(messageId, report.nudge.identity, via);
  }
}

/** The first target that really reached the agent (a Redis publish nobody heard, or the log line, is no wake). */
export function wakeVia(report: DeliveryReport): WakeVia | null {
  for (const [target, outcome] of Object.entries(report.outcomes)) {
    if (outcome === 'delivered' && (WAKE_VIAS as readonly string[]).includes(target)) return target as WakeVia;
  }
  return null;
}
