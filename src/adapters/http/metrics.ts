/**
 * Prometheus metrics on a Registry owned by one server (never prom-client's
 * global default registry, so two servers in one process never collide).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { nodeIdOf } from '../../config';
import { isMailboxError } from '../../errors';
import { refusedStreams, type MailboxServices } from '../../application/mailboxServices';
import type { CommandName, Surface } from '../../application/commandNames';
import { LAG_COUNTED_UP_TO, viewsLag, type ViewsLag } from '../../application/viewsLag';

export class MailboxMetrics {
  readonly registry = new Registry();
  private readonly commands: Counter<'command' | 'surface' | 'outcome' | 'code'>;
  private readonly requests: Histogram<'method' | 'route' | 'status'>;
  private readonly wakeLatency: Histogram;
  private readonly viewsLagging: Counter<'command' | 'surface'>;
  /** The refusals `rejected` counted, so that the rejection log's hook (refusedOnce) does not count them twice. */
  private readonly countedRefusals = new WeakSet<object>();

  constructor(mailbox: MailboxServices, openWakeStreams: () => number) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'mailbox_' }); // mailbox_process_*, mailbox_nodejs_*
    this.commands = new Counter({
      name: 'mailbox_commands_total',
      help: 'Commands handled, by outcome (accepted|rejected) and error code',
      labelNames: ['command', 'surface', 'outcome', 'code'],
      registers,
    });
    this.viewsLagging = new Counter({
      name: 'mailbox_views_lagging_total',
      help: 'Accepted commands answered with a VIEWS_LAGGING warning: the views did not show them within MAILBOX_AWAIT_PROJECTION_MS',
      labelNames: ['command', 'surface'],
      registers,
    });
    this.requests = new Histogram({
      name: 'mailbox_http_request_duration_seconds',
      help:
        'HTTP request duration by route and status: every request, answered or abandoned (408: cut off by the request ' +
        'timeout; 499: its client left before the answer); method and route "(unparsed)": refused by the HTTP parser ' +
        'before it was a request (400 malformed, 408 headers not in time, 431 headers too large, 499 its client closed ' +
        'the connection mid-head), timed from the ' +
        "connection's opening or its previous answer",
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.wakeLatency = new Histogram({
      name: 'mailbox_wake_latency_seconds',
      help: "From a send request arriving at this server to each wake event written to a recipient's SSE stream",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5],
      registers,
    });
    // One reading of the lag per scrape for both gauges: prom-client collects every metric of a scrape at once, so the
    // second gauge shares the reading the first started (a count and a marker from two readings could disagree).
    let reading: Promise<ViewsLag> | null = null;
    const lagOfThisScrape = (): Promise<ViewsLag> =>
      (reading ??= (async () => {
        const checkpoint = mailbox.runner.getStatus().checkpoint; // before the head, which only grows: never below 0
        const head = await mailbox.eventStore.headPosition();
        return viewsLag(mailbox.eventStore, head, checkpoint === null ? null : BigInt(checkpoint));
      })().finally(() => (reading = null)));
    new Gauge({
      name: 'mailbox_projection_lag_events',
      help:
        `Events in the log not yet applied to the views (counted up to ${LAG_COUNTED_UP_TO}, read to count on ` +
        'EventStoreDB, whose positions are byte offsets; at that count, mailbox_projection_lag_events_at_least is 1)',
      registers,
      async collect() {
        this.set((await lagOfThisScrape()).events);
      },
    });
    new Gauge({
      name: 'mailbox_projection_lag_events_at_least',
      help:
        `1 when mailbox_projection_lag_events stopped counting at ${LAG_COUNTED_UP_TO}: the views are at least that many ` +
        'events behind; 0 when it is the exact count',
      registers,
      async collect() {
        this.set((await lagOfThisScrape()).atLeast ? 1 : 0);
      },
    });
    new Gauge({
      name: 'mailbox_projector_leader',
      help:
        'Who projects (1 for the current answer): role alone (embedded views, this process; node: its MAILBOX_NODE_ID), leading (this node holds the ' +
        'projector lease) or following (node: the holder seen, "" when none); token: the lease fencing token',
      labelNames: ['role', 'node', 'token'],
      registers,
      collect() {
        const leadership = mailbox.runner.getStatus().leadership;
        this.reset();
        if (leadership.role === 'alone') this.set({ role: 'alone', node: nodeIdOf(mailbox.config), token: '' }, 1);
        else if (leadership.role === 'leading') this.set({ role: 'leading', node: leadership.node, token: leadership.token }, 1);
        else this.set({ role: 'following', node: leadership.leader ?? '', token: leadership.token ?? '' }, 1);
      },
    });
    new Gauge({
      name: 'mailbox_projector_stopped_at_unreadable_event',
      help:
        'The log position of a stored event this build cannot read, where the projector stopped (nothing after it is ' +
        'applied until the log is mended: /readyz lastError says what is wrong); 0 when there is none',
      registers,
      collect() {
        this.set(Number(mailbox.runner.getStatus().stoppedAtUnreadable ?? 0));
      },
    });
    new Gauge({
      name: 'mailbox_unwoken_messages',
      help: 'Messages that expected a wake (a recipient was a registered agent when sent, wakes not suppressed) and woke none of their recipients within MAILBOX_WAKE_SLA_MS, not all of whom that were due a wake saw or read them (the unwoken alarm)',
      registers,
      async collect() {
        const now = mailbox.clock?.now().getTime() ?? Date.now();
        const sentBefore = new Date(now - mailbox.config.wakeSlaMs).toISOString();
        // Views not answering (e.g. Redis down): keep the last count; readiness reports the outage.
        const unwoken = await mailbox.projections.unwoken({ sentBefore, limit: 0, pendingOnly: false }).catch(() => null);
        if (unwoken) this.set(unwoken.count);
      },
    });
    // Dropped without a trace on /metrics before: a bound full (the store down for long, or a stream refused).
    new Counter({
      name: 'mailbox_seen_marks_dropped_total',
      help:
        'Seen marks not recorded: too many waited to be written (the event store down for long), or a recipient whose ' +
        "seen stream the store refuses already had as many kept as it may (the sender's ledger never shows them seen)",
      registers,
      collect() {
        this.reset();
        this.inc(mailbox.seenMarks?.dropped ?? 0);
      },
    });
    new Counter({
      name: 'mailbox_wake_observations_dropped_total',
      help: "Observed wakes not recorded in the delivery ledger: too many waited to be written (the event store down for long, or the ledger's stream refused)",
      registers,
      collect() {
        this.reset();
        this.inc(mailbox.wakeRecorder.dropped);
      },
    });
    new Gauge({
      name: 'mailbox_refused_streams',
      help:
        'Streams the seen marks (writer "seen marks") or the delivery ledger (writer "delivery ledger") write to that ' +
        'the event store refuses for what only an operator mends (deleted under the mailbox): /readyz names them',
      labelNames: ['writer'],
      registers,
      collect() {
        const refused = refusedStreams(mailbox);
        for (const writer of ['seen marks', 'delivery ledger'] as const)
          this.set({ writer }, refused.filter((refusal) => refusal.writer === writer).length);
      },
    });
    new Gauge({
      name: 'mailbox_wake_streams_open',
      help: 'Open SSE wake streams (GET /v1/wake)',
      registers,
      collect() {
        this.set(openWakeStreams());
      },
    });
  }

  /** Counts a command by its outcome and passes its result or error through unchanged. */
  async command<T>(command: CommandName, surface: Surface, run: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await run();
    } catch (error) {
      this.rejected(command, surface, error);
      throw error;
    }
    this.accepted(command, surface, result);
    return result;
  }

  /** A command answered with `result` (and, when its answer says so, one that the views did not show in time). */
  accepted(command: CommandName, surface: Surface, result: unknown): void {
    this.commands.inc({ command, surface, outcome: 'accepted', code: '' });
    if (saysViewsLagging(result)) this.viewsLagging.inc({ command, surface });
  }

  /**
   * A command refused with `error`. `command` is a string: a refusal on a route that is no command (a wrong
   * token on POST /mcp) is counted under its method and path, as the rejection log names it.
   */
  rejected(command: string, surface: Surface, error: unknown): void {
    if (typeof error === 'object' && error !== null) this.countedRefusals.add(error);
    this.commands.inc({ command, surface, outcome: 'rejected', code: isMailboxError(error) ? error.code : 'INTERNAL' });
  }

  /**
   * A command's refusal as the rejection log hears it, counted unless `command` counted it already: an MCP tool's
   * arguments refused before its command ran (archive_message given messageIds, update_task given state) were recorded
   * but never counted, while the same refusals over HTTP, and add_message's, were.
   */
  refusedOnce(command: CommandName, surface: Surface, error: unknown): void {
    if (typeof error === 'object' && error !== null && this.countedRefusals.has(error)) return;
    this.rejected(command, surface, error);
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe({ method, route, status: String(status) }, seconds);
  }

  wakeDelivered(seconds: number): void {
    this.wakeLatency.observe(seconds);
  }

  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

const saysViewsLagging = (result: unknown): boolean => {
  const warnings = (result as { warnings?: unknown } | null)?.warnings;
  return Array.isArray(warnings) && warnings.some((warning) => (warning as { code?: unknown })?.code === 'VIEWS_LAGGING');
};
