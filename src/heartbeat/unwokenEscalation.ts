/**
 * The unwoken alarm's escalation (issue 13). Each tick: count the messages
 * that expected a wake and woke none of their recipients within the wake SLA
 * (a gauge), and escalate each one not escalated yet through its recipients'
 * nudge targets, once (each recipient gets one nudge per tick for all the
 * messages the tick escalated to it). Once, also with several daemons and across restarts:
 * an escalation is first claimed by creating the message's escalation stream
 * (WakeEscalated, expected revision 'no_stream'); a daemon whose append
 * conflicts lost the claim and sends nothing. The claim is written before the
 * nudges go out, so a daemon killed in between has escalated without nudging
 * (at most once, never twice); the log says so. A nudge a target delivered
 * wakes the recipient: recorded as WakeObserved via that target. A recipient
 * that saw or read the message needs no wake and is not nudged (the read
 * model no longer lists a message every recipient saw or read).
 */
import type { Logger } from 'pino';
import { escalationStream } from '../events/streams';
import { WAKE_VIAS } from '../events/storedShapes';
import type { WakeEscalated, WakeVia } from '../events/types';
import type { Nudge } from './nudgeDecider';
import type { DeliveryRow, UnwokenMessage } from '../projections/readModel/ledger';
import type { WakeRecorder } from '../application/wakeRecorder';
import type { EventStore } from '../events/eventStore';
import type { ProjectionStore } from '../projections/projectionStore';
import type { HeartbeatMetrics } from './heartbeatMetrics';
import { EscalationClaims, named, nudgeAbout, recipientsWhere, whoIsTold, type ClaimRefused } from './escalationClaims';
import type { DeliveryReport, NudgeDispatcher } from './nudgeDispatcher';
import { nudgesPerRecipient, type EscalatedMessage } from './escalationNudges';

/** Escalations started per tick at most (the rest wait for the next tick, oldest first). */
const MAX_PER_TICK = 100;
/**
 * Messages looked at per tick at most. Held ones (no nudge target serves their recipients) stay pending, oldest first:
 * were a tick to look at only the oldest MAX_PER_TICK, 100 held messages would keep every newer one, whose recipients a
 * target serves, from ever being escalated. So a tick reads further, in growing pages, past the held ones, up to this.
 */
const MAX_LOOKED_AT_PER_TICK = 10_000;

export interface EscalationReport {
  /** Unwoken messages past the SLA, escalated or not. */
  unwoken: number;
  /** Messages this tick escalated. */
  escalated: string[];
  /**
   * Present when this tick held escalations back, unclaimed (a later tick or daemon escalates them): none was looked at
   * (`projector_absent`: no server keeps the views, so they may miss a wake the log has), or these messages' recipients
   * that may be nudged are served by no nudge target (`no_nudge_target`: a claim would use the one-time escalation up
   * with nobody told).
   */
  held?: EscalationsHeld;
  /**
   * Present when claims were refused for what only an operator mends (the message's escalation stream deleted under
   * the mailbox: EventStoreDB): those messages were not escalated, nothing written; the daemon's health names them.
   */
  refused?: ClaimRefused[];
}

export type EscalationsHeld = { reason: 'projector_absent' } | { reason: 'no_nudge_target'; messageIds: string[] };

export class UnwokenEscalation {
  /** Claims made by this daemon (the views may not show them yet), and those refused, said once each. */
  private readonly claims: EscalationClaims;
  /** Held back for want of a nudge target, and said so (a running daemon says each message once, not every tick). */
  private readonly saidHeld = new Set<string>();

  constructor(
    private readonly sources: { eventStore: EventStore; projections: ProjectionStore },
    private readonly dispatcher: NudgeDispatcher,
    private readonly recorder: WakeRecorder,
    private readonly metrics: HeartbeatMetrics,
    private readonly logger: Logger,
    private readonly slaMs: number,
    /** Whom a nudge may reach: registered, not retired, not opted out (the others are listed in the claim, not nudged). */
    private readonly nudgeable: (identity: string) => boolean,
  ) {
    this.claims = new EscalationClaims(sources.eventStore, (refusal) => this.sayRefused(refusal));
  }

  /**
   * The counts only (the views' own, as of their checkpoint): no message is looked at for an escalation. `awaiting`:
   * the unwoken messages not escalated yet, each of which a tick would look at (the escalations held back).
   */
  async notLookedAt(now: number, reason: 'projector_absent'): Promise<{ report: EscalationReport; awaiting: number }> {
    const sentBefore = new Date(now - this.slaMs).toISOString();
    const { projections } = this.sources;
    const all = await projections.unwoken({ sentBefore, limit: 0, pendingOnly: false });
    const pending = await projections.unwoken({ sentBefore, limit: 0, pendingOnly: true });
    this.metrics.unwoken.set(all.count);
    return { report: { unwoken: all.count, escalated: [], held: { reason } }, awaiting: pending.count };
  }

  async run(now: number): Promise<EscalationReport> {
    const sentBefore = new Date(now - this.slaMs).toISOString();
    const { projections } = this.sources;
    const all = await projections.unwoken({ sentBefore, limit: 0, pendingOnly: false });
    this.metrics.unwoken.set(all.count);
    const escalated: string[] = [];
    const held: string[] = [];
    const refused: ClaimRefused[] = [];
    const claimed: EscalatedMessage[] = [];
    try {
      await this.escalate(sentBefore, now, { escalated, held, refused, claimed });
    } finally {
      // What was claimed is nudged even when a later message's read failed (the views out mid-tick): a claim is the one
      // escalation its message gets, and its nudges no longer go out right after it but once per recipient, here.
      await nudgeEachRecipient({ projections, dispatcher: this.dispatcher, recorder: this.recorder }, 'unwoken', claimed, now);
    }
    return {
      unwoken: all.count,
      escalated,
      ...(held.length > 0 ? { held: { reason: 'no_nudge_target', messageIds: held } } : {}),
      ...(refused.length > 0 ? { refused } : {}),
    };
  }

  /** Claims the escalation of each message past the SLA not escalated yet (at most MAX_PER_TICK), oldest first. */
  private async escalate(
    sentBefore: string,
    now: number,
    {
      escalated,
      held,
      refused,
      claimed,
    }: { escalated: string[]; held: string[]; refused: ClaimRefused[]; claimed: EscalatedMessage[] },
  ): Promise<void> {
    for await (const message of this.pendingOldestFirst(sentBefore, () => escalated.length >= MAX_PER_TICK)) {
      if (this.claims.made(message.messageId)) continue;
      const views = this.sources.projections;
      // A recipient that saw or read it needs no wake (an agent that polls): only the others are nudged.
      const recipients = await recipientsWhere(views, message.messageId, needsWake);
      // Recipients it may nudge, and no target serves any of them (no Redis, webhook or hook for them): a claim would use
      // the one-time escalation up with nobody told, and a daemon configured with a target later would never escalate
      // it. Held back unclaimed, said (once per message by a running daemon). One whose recipients none may be nudged
      // (retired, opted out) is claimed as before: no target would change that.
      const mayBeNudged = recipients.filter((identity) => this.nudgeable(identity));
      if (mayBeNudged.length > 0 && !mayBeNudged.some((identity) => this.dispatcher.servedBy(identity))) {
        held.push(message.messageId);
        this.sayHeld(message, mayBeNudged);
        continue;
      }
      this.saidHeld.delete(message.messageId);
      const at = new Date(now).toISOString();
      const event: WakeEscalated = {
        type: 'WakeEscalated',
        data: { messageId: message.messageId, recipients, slaMs: this.slaMs, escalatedAt: at },
      };
      const stream = escalationStream(message.messageId);
      if (!(await this.claims.claim(stream, event, message.messageId, at, refused))) continue;
      escalated.push(message.messageId);
      this.metrics.escalations.inc();
      const { nudged, notNudged, told } = whoIsTold(recipients, this.nudgeable);
      this.logger.error(
        { alarm: 'message_unwoken', ...message, slaMs: this.slaMs, recipients, nudged, notNudged },
        `ALARM message woke none of its recipients within the wake SLA; escalating once: ${told}`,
      );
      claimed.push({ messageId: message.messageId, nudged });
    }
  }

  private sayRefused(refusal: ClaimRefused): void {
    this.logger.error(
      { alarm: 'message_unwoken', ...refusal },
      `ALARM message woke none of its recipients within the wake SLA; not escalated: its escalation stream ` +
        `${refusal.stream} was refused (nothing written): ${refusal.error} An operator must act: ${refusal.operatorAction}`,
    );
  }

  /**
   * The pending unwoken messages, oldest first, each once, until `enough()` or none is left (or MAX_LOOKED_AT_PER_TICK):
   * the first page is MAX_PER_TICK, each next one four times larger (the views answer pages from the oldest; a message
   * already looked at is passed over).
   */
  private async *pendingOldestFirst(sentBefore: string, enough: () => boolean): AsyncGenerator<UnwokenMessage> {
    const looked = new Set<string>();
    for (let limit = MAX_PER_TICK; ; limit = Math.min(limit * 4, MAX_LOOKED_AT_PER_TICK)) {
      const page = await this.sources.projections.unwoken({ sentBefore, limit, pendingOnly: true });
      for (const message of page.messages) {
        if (enough()) return;
        if (looked.has(message.messageId)) continue;
        looked.add(message.messageId);
        yield message;
      }
      if (enough() || page.messages.length < limit || limit >= MAX_LOOKED_AT_PER_TICK) return;
    }
  }

  private sayHeld(message: { messageId: string }, recipients: readonly string[]): void {
    if (this.saidHeld.has(message.messageId)) return;
    if (this.saidHeld.size >= 10_000) this.saidHeld.clear();
    this.saidHeld.add(message.messageId);
    this.logger.error(
      { alarm: 'message_unwoken', ...message, slaMs: this.slaMs, recipients, held: 'no_nudge_target' },
      `ALARM message woke none of its recipients within the wake SLA; not escalated: no nudge target serves ` +
        `${named(recipients)} (no Redis, webhook or hook is configured for them), so nobody could be told; it awaits ` +
        'escalation, unclaimed, by a heartbeat with a target',
    );
  }
}

/**
 * One nudge per recipient (`reason`) for all the tick claimed for it (a nudge per message and recipient flooded its
 * targets). A delivered nudge wakes its recipient (WakeObserved via its target) for every message it carried.
 */
export async function nudgeEachRecipient(
  by: { projections: ProjectionStore; dispatcher: NudgeDispatcher; recorder: WakeRecorder },
  reason: NonNullable<Nudge['reason']>,
  claimed: readonly EscalatedMessage[],
  now: number,
): Promise<void> {
  for (const { identity, messageIds } of nudgesPerRecipient(claimed)) {
    const nudge = await nudgeAbout(by.projections, identity, reason, messageIds, now);
    by.dispatcher.dispatch(nudge, (report) => {
      const via = wakeVia(report);
      if (via === null) return;
      for (const messageId of report.nudge.messageIds ?? []) by.recorder.observed(messageId, identity, via);
    });
  }
}

/** A recipient no wake reached and that has neither seen nor read the message: the one an escalation is for. */
export const needsWake = (row: DeliveryRow): boolean => row.woken === null && row.seen === null && row.read === null;

/** The first target that really reached the agent (a Redis publish nobody heard, or the log line, is no wake). */
export function wakeVia(report: DeliveryReport): WakeVia | null {
  for (const [target, outcome] of Object.entries(report.outcomes)) {
    if (outcome === 'delivered' && (WAKE_VIAS as readonly string[]).includes(target)) return target as WakeVia;
  }
  return null;
}
