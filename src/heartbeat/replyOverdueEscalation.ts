/**
 * Reply obligations falling due (issue 13). Each tick: the messages whose
 * expected replies are due and not all given; for each, once (the claim:
 * ReplyOverdue creates the message's reply-overdue stream; another daemon's
 * append conflicts), every recipient that has not answered is nudged (one
 * nudge per recipient per tick, carrying every message the tick found overdue
 * that it owes: a nudge per message flooded its targets), and the sender is
 * woken by the read model when it applies the ReplyOverdue
 * (wake/reply-overdue naming them). A reply afterwards clears what the
 * recipient owes; nothing fires again for that message.
 */
import type { Logger } from 'pino';
import type { WakeRecorder } from '../application/wakeRecorder';
import type { EventStore } from '../events/eventStore';
import { replyOverdueStream } from '../events/streams';
import type { ReplyOverdue } from '../events/types';
import type { ProjectionStore } from '../projections/projectionStore';
import { EscalationClaims, recipientsWhere, whoIsTold, type ClaimRefused } from './escalationClaims';
import type { HeartbeatMetrics } from './heartbeatMetrics';
import type { NudgeDispatcher } from './nudgeDispatcher';
import type { EscalatedMessage } from './escalationNudges';
import { nudgeEachRecipient } from './unwokenEscalation';

const MAX_PER_TICK = 100;

export interface ReplyOverdueReport {
  /** Messages found overdue by this tick, each with who has not answered. */
  overdue: Array<{ messageId: string; waitingOn: string[] }>;
  /** Present when none was looked at: no projector keeps the views (they may miss a reply the log has). */
  held?: { reason: 'projector_absent' };
  /**
   * Present when claims were refused for what only an operator mends (the message's reply-overdue stream deleted under
   * the mailbox: EventStoreDB): not found overdue, nobody nudged, nothing written; the daemon's health names them.
   */
  refused?: ClaimRefused[];
}

export class ReplyOverdueEscalation {
  /** Claims made by this daemon, and those refused (a stream deleted under the mailbox), said once each. */
  private readonly claims: EscalationClaims;

  constructor(
    private readonly sources: { eventStore: EventStore; projections: ProjectionStore },
    private readonly dispatcher: NudgeDispatcher,
    private readonly recorder: WakeRecorder,
    private readonly metrics: HeartbeatMetrics,
    private readonly logger: Logger,
    private readonly nudgeable: (identity: string) => boolean,
  ) {
    this.claims = new EscalationClaims(sources.eventStore, (refusal) => this.sayRefused(refusal));
  }

  /**
   * None is looked at (no projector keeps the views): `due` is how many reply obligations a tick would have looked at
   * (those due and not found overdue yet, as the views last stood; up to the MAX_PER_TICK a tick looks at).
   */
  async notLookedAt(now: number, reason: 'projector_absent'): Promise<{ report: ReplyOverdueReport; due: number }> {
    const due = await this.sources.projections.dueReplies(new Date(now).toISOString(), MAX_PER_TICK);
    return { report: { overdue: [], held: { reason } }, due: due.length };
  }

  async run(now: number): Promise<ReplyOverdueReport> {
    const { projections } = this.sources;
    const at = new Date(now).toISOString();
    const overdue: ReplyOverdueReport['overdue'] = [];
    const refused: ClaimRefused[] = [];
    const claimed: EscalatedMessage[] = [];
    try {
      await this.claimDue(at, overdue, refused, claimed);
    } finally {
      // What was claimed is nudged even when a later message's read failed (as UnwokenEscalation.run).
      const { dispatcher, recorder } = this;
      await nudgeEachRecipient({ projections, dispatcher, recorder }, 'reply-overdue', claimed, now);
    }
    return { overdue, ...(refused.length > 0 ? { refused } : {}) };
  }

  /** Claims each reply obligation fallen due and not claimed yet (at most MAX_PER_TICK). */
  private async claimDue(
    at: string,
    overdue: ReplyOverdueReport['overdue'],
    refused: ClaimRefused[],
    claimed: EscalatedMessage[],
  ): Promise<void> {
    const { projections } = this.sources;
    for (const due of await projections.dueReplies(at, MAX_PER_TICK)) {
      if (this.claims.made(due.messageId)) continue;
      const waitingOn = await recipientsWhere(projections, due.messageId, (row) => row.replied === null);
      if (waitingOn.length === 0) continue; // all answered: the views are about to say so
      const event: ReplyOverdue = {
        type: 'ReplyOverdue',
        data: { messageId: due.messageId, sender: due.sender, waitingOn, dueBy: due.dueBy, overdueAt: at },
      };
      const stream = replyOverdueStream(due.messageId);
      if (!(await this.claims.claim(stream, event, due.messageId, at, refused))) continue;
      overdue.push({ messageId: due.messageId, waitingOn });
      this.metrics.repliesOverdue.inc();
      const { nudged, notNudged, told } = whoIsTold(waitingOn, this.nudgeable);
      this.logger.warn(
        { messageId: due.messageId, sender: due.sender, dueBy: due.dueBy, waitingOn, nudged, notNudged },
        `reply overdue (once): ${told}; the sender gets a reply-overdue wake`,
      );
      claimed.push({ messageId: due.messageId, nudged });
    }
  }

  private sayRefused(refusal: ClaimRefused): void {
    this.logger.error(
      { ...refusal },
      `reply overdue, not said: its reply-overdue stream ${refusal.stream} was refused (nothing written, nobody ` +
        `nudged): ${refusal.error} An operator must act: ${refusal.operatorAction}`,
    );
  }
}
