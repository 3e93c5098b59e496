/** The daemon's Prometheus metrics, in its own Registry (never the global one, so several daemons can share a process). */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LAG_COUNTED_UP_TO } from '../application/viewsLag';

export class HeartbeatMetrics {
  readonly registry = new Registry();
  readonly ticks = new Counter({
    name: 'mailbox_heartbeat_ticks_total',
    help: 'Heartbeat ticks run',
    registers: [this.registry],
  });
  readonly tickFailures = new Counter({
    name: 'mailbox_heartbeat_tick_failures_total',
    help: 'Ticks that failed (stores unreachable); the next tick tries again',
    registers: [this.registry],
  });
  readonly tickDuration = new Histogram({
    name: 'mailbox_heartbeat_tick_duration_seconds',
    help: 'Time to read counts, decide and dispatch nudges',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers: [this.registry],
  });
  readonly decisions = new Counter({
    name: 'mailbox_heartbeat_decisions_total',
    help: 'Per-agent decisions by verdict (nudge, no_mail, opted_out, active, wake_grace, same_set, cooldown)',
    labelNames: ['verdict'],
    registers: [this.registry],
  });
  readonly deliveries = new Counter({
    name: 'mailbox_heartbeat_deliveries_total',
    help: 'Nudge deliveries by target and outcome (delivered, unheard, failed; target log, outcome logged: no target served the agent)',
    labelNames: ['target', 'outcome'],
    registers: [this.registry],
  });
  readonly retries = new Counter({
    name: 'mailbox_heartbeat_delivery_retries_total',
    help: 'Delivery retries by target',
    labelNames: ['target'],
    registers: [this.registry],
  });
  readonly agentsWithUnread = new Gauge({
    name: 'mailbox_heartbeat_agents_with_unread',
    help: 'Agents with unread mail at the last tick (retired agents not counted: they can no longer read it)',
    registers: [this.registry],
  });
  readonly head = new Gauge({
    name: 'mailbox_heartbeat_log_head_position',
    help: 'Event log head position',
    registers: [this.registry],
  });
  readonly checkpoint = new Gauge({
    name: 'mailbox_heartbeat_projection_checkpoint_position',
    help: 'Position the projections have applied up to',
    registers: [this.registry],
  });
  readonly lag = new Gauge({
    name: 'mailbox_heartbeat_projection_lag_positions',
    help: 'Log head minus projection checkpoint, in log positions (byte offsets on EventStoreDB: see ..._lag_events)',
    registers: [this.registry],
  });
  readonly lagEvents = new Gauge({
    name: 'mailbox_heartbeat_projection_lag_events',
    help:
      `Events in the log not yet applied to the views (counted up to ${LAG_COUNTED_UP_TO}: at that count, ` +
      'mailbox_heartbeat_projection_lag_events_at_least is 1)',
    registers: [this.registry],
  });
  readonly lagEventsAtLeast = new Gauge({
    name: 'mailbox_heartbeat_projection_lag_events_at_least',
    help:
      `1 when mailbox_heartbeat_projection_lag_events stopped counting at ${LAG_COUNTED_UP_TO}: the views are at least ` +
      'that many events behind; 0 when it is the exact count',
    registers: [this.registry],
  });
  readonly stalled = new Gauge({
    name: 'mailbox_heartbeat_projection_stalled',
    help: '1 while the projector is stalled (lag > 0 and checkpoint not advancing for the stall threshold)',
    registers: [this.registry],
  });
  readonly projectorLive = new Gauge({
    name: 'mailbox_heartbeat_projector_live',
    help:
      '1 while a projector (a mailbox server) keeps the views this daemon reads, 0 while none has renewed its live mark ' +
      '(the server is stopped or hung); absent when the daemon runs its own projector',
    registers: [this.registry],
  });
  readonly stuckSeconds = new Gauge({
    name: 'mailbox_heartbeat_projection_stuck_seconds',
    help: 'How long the checkpoint has not advanced while behind the log head',
    registers: [this.registry],
  });
  readonly wakesReceived = new Counter({
    name: 'mailbox_heartbeat_wakes_received_total',
    help: 'Wake events the daemon received',
    registers: [this.registry],
  });
  readonly wakeLatency = new Histogram({
    name: 'mailbox_heartbeat_wake_latency_seconds',
    help: 'Command time of the event to wake received by the daemon (sampled)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly unwoken = new Gauge({
    name: 'mailbox_heartbeat_unwoken_messages',
    help: 'Messages that expected a wake (a recipient was a registered agent when sent, wakes not suppressed) and woke none of their recipients within the wake SLA, not all of whom that were due a wake saw or read them (the unwoken alarm)',
    registers: [this.registry],
  });
  readonly escalations = new Counter({
    name: 'mailbox_heartbeat_unwoken_escalations_total',
    help: "Unwoken messages this daemon escalated through their recipients' nudge targets (each message once)",
    registers: [this.registry],
  });
  readonly escalationsHeld = new Gauge({
    name: 'mailbox_heartbeat_escalations_held',
    help:
      'Escalations the last tick held back, unclaimed, by reason: projector_absent (no projector keeps the views: the ' +
      'unwoken messages not escalated yet and the replies due, up to 100, none looked at), no_nudge_target (unwoken ' +
      'messages whose recipients no nudge target serves); 0 once they are no longer held',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly repliesOverdue = new Counter({
    name: 'mailbox_heartbeat_replies_overdue_total',
    help: 'Messages whose expected replies fell due unanswered, found by this daemon (each message once)',
    registers: [this.registry],
  });

  /** What the daemon's delivery-ledger recorder dropped (counted at each scrape: recordsDropsOf). */
  private droppedWakes: () => number = () => 0;
  readonly wakeObservationsDropped = new Counter({
    name: 'mailbox_heartbeat_wake_observations_dropped_total',
    help: "Nudges delivered (wakes) not recorded in the delivery ledger: too many waited to be written (the event store down for long, or the ledger's stream refused)",
    registers: [this.registry],
    collect: () => {
      this.wakeObservationsDropped.reset();
      this.wakeObservationsDropped.inc(this.droppedWakes());
    },
  });

  /** The count of observed wakes `recorder` dropped, read at each scrape. */
  recordsDropsOf(recorder: { readonly dropped: number }): void {
    this.droppedWakes = () => recorder.dropped;
  }

  constructor() {
    // Both series from the start, at 0: a scraper's alert on them needs no tick that held something first.
    for (const reason of ESCALATIONS_HELD_REASONS) this.escalationsHeld.set({ reason }, 0);
  }

  /** The escalations held back by the last tick: `count` for its reason, 0 for the others (no longer held). */
  heldEscalations(held: { reason: EscalationsHeldReason; count: number } | null): void {
    for (const reason of ESCALATIONS_HELD_REASONS)
      this.escalationsHeld.set({ reason }, held !== null && held.reason === reason ? held.count : 0);
  }
}

export const ESCALATIONS_HELD_REASONS = ['projector_absent', 'no_nudge_target'] as const;
export type EscalationsHeldReason = (typeof ESCALATIONS_HELD_REASONS)[number];
