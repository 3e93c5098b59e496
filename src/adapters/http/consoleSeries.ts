/**
 * The console's charts over the last hour: every 10 s a sample of sends
 * accepted by this node (per second since the previous sample), projection lag
 * (events) and the agents' unread mail. Kept in process: 360 samples, oldest dropped.
 */
import type { MailboxServices } from '../../application/mailboxServices';
import type { MailboxMetrics } from './metrics';
import { viewsLag } from '../../application/viewsLag';

export interface SeriesSample {
  /** Unix time in seconds. */
  t: number;
  sendsPerSecond: number | null;
  lag: number | null;
  unread: number | null;
}

export const SAMPLE_EVERY_MS = 10_000;
const SAMPLES = 360;

export class ConsoleSeries {
  private readonly samples: SeriesSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private previous: { t: number; sends: number } | null = null;

  constructor(
    private readonly mailbox: MailboxServices,
    private readonly metrics: MailboxMetrics,
  ) {}

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), SAMPLE_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  all(): { everySeconds: number; samples: SeriesSample[] } {
    return { everySeconds: SAMPLE_EVERY_MS / 1000, samples: [...this.samples] };
  }

  /** Takes one sample now; a part that cannot be read (a store away) is null, not zero. */
  async sample(now = Date.now()): Promise<SeriesSample> {
    const t = Math.round(now / 1000);
    const sends = await this.acceptedSends();
    const sendsPerSecond = this.previous && t > this.previous.t ? (sends - this.previous.sends) / (t - this.previous.t) : null;
    this.previous = { t, sends };
    const [lag, unread] = await Promise.all([this.lag().catch(() => null), this.unread().catch(() => null)]);
    const sample = { t, sendsPerSecond, lag, unread };
    this.samples.push(sample);
    if (this.samples.length > SAMPLES) this.samples.shift();
    return sample;
  }

  private async acceptedSends(): Promise<number> {
    const counter = this.metrics.registry.getSingleMetric('mailbox_commands_total');
    if (!counter) return 0;
    const { values } = await counter.get();
    return values
      .filter((v) => v.labels.command === 'send' && v.labels.outcome === 'accepted')
      .reduce((sum, v) => sum + v.value, 0);
  }

  private async lag(): Promise<number> {
    const checkpoint = await this.mailbox.projections.checkpoint();
    const head = await this.mailbox.eventStore.headPosition(); // after the checkpoint: the head only grows, the lag is >= 0
    return (await viewsLag(this.mailbox.eventStore, head, checkpoint)).events; // events, not positions
  }

  /**
   * The agents' unread mail, as the agents table counts it: the views also keep the unread of a name no agent holds (a
   * send to an unregistered recipient), which is nobody's inbox.
   */
  private async unread(): Promise<number> {
    const [agents, heartbeats] = await Promise.all([
      this.mailbox.projections.listAgents(),
      this.mailbox.projections.allHeartbeats(),
    ]);
    const registered = new Set(agents.map((agent) => agent.identity));
    return heartbeats.filter((h) => registered.has(h.identity)).reduce((sum, h) => sum + h.unread, 0);
  }
}
