/**
 * Feeds the ordered log into the projection store from its checkpoint:
 * catch-up and live alike, in batches, restarting with backoff after a
 * failure (and saying so in the log) instead of stalling silently.
 */
import { inject, injectable } from 'tsyringe';
import type { Logger } from 'pino';
import type { EventStore, EventSubscription } from '../events/eventStore';
import type { StoredEvent } from '../events/types';
import { TOKENS } from '../tokens';
import { projectStored } from './projector';
import { ProjectionCheckpointRewound, type ProjectionStore } from './projectionStore';
import { PositionWaiters } from './positionWaiters';

const MAX_BATCH = 1000;
const MAX_BACKOFF_MS = 5000;
/** How often a following runner checks that the stored checkpoint did not go back (views lost while idle). */
const CHECKPOINT_WATCH_MS = 1000;

export interface RunnerStatus {
  running: boolean;
  checkpoint: string | null;
  lastError: string | null;
  lastAppliedAt: string | null;
}

@injectable()
export class ProjectionRunner {
  private subscription: EventSubscription | null = null;
  private stopped = true;
  private loop: Promise<void> | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly waiters = new PositionWaiters();
  private status: RunnerStatus = { running: false, checkpoint: null, lastError: null, lastAppliedAt: null };

  constructor(
    @inject(TOKENS.EventStore) private readonly store: EventStore,
    @inject(TOKENS.ProjectionStore) private readonly projections: ProjectionStore,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  /** Catches up to the log head (so the views are complete when this resolves), then follows live. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.catchUp();
    this.loop = this.follow();
    this.watchdog = setInterval(() => void this.watchCheckpoint(), CHECKPOINT_WATCH_MS);
    this.watchdog.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    await this.subscription?.close();
    await this.loop;
    this.loop = null;
    this.status.running = false;
  }

  getStatus(): RunnerStatus {
    return { ...this.status };
  }

  /** Resolves true once the views include `position` (read-your-writes), false after the timeout. */
  waitFor(position: bigint, timeoutMs = 2000): Promise<boolean> {
    return this.waiters.waitFor(position, timeoutMs);
  }

  private async catchUp(): Promise<void> {
    const started = Date.now();
    let after = await this.projections.checkpoint();
    let total = 0;
    for (;;) {
      const page = await this.store.readAll(after, MAX_BATCH);
      if (page.length === 0) break;
      try {
        await this.apply(page);
      } catch (error) {
        if (!(error instanceof ProjectionCheckpointRewound)) throw error;
        this.logger.warn({ reason: error.message }, 'projection views lost; rebuilding them from the log');
        after = error.checkpoint;
        continue;
      }
      after = page[page.length - 1].position;
      total += page.length;
    }
    if (total > 0) {
      const ms = Date.now() - started;
      this.logger.info({ events: total, ms, perSecond: Math.round((total / Math.max(ms, 1)) * 1000) }, 'projections caught up');
    }
  }

  private async follow(): Promise<void> {
    let backoff = 100;
    while (!this.stopped) {
      try {
        this.status.running = true;
        await this.consume(await this.projections.checkpoint());
        backoff = 100;
      } catch (error) {
        this.status.lastError = error instanceof Error ? error.message : String(error);
        if (error instanceof ProjectionCheckpointRewound) {
          this.logger.warn({ reason: error.message }, 'projection views lost; rebuilding them from the log');
          continue;
        }
        this.logger.error({ err: error, retryInMs: backoff }, 'projection subscription failed; resubscribing from checkpoint');
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** Pumps the subscription into a queue and applies whatever has arrived as one batch. */
  private async consume(after: bigint | null): Promise<void> {
    const subscription = (this.subscription = this.store.subscribe(after));
    if (this.stopped) await subscription.close(); // stop() came while the checkpoint was being read
    const queue: StoredEvent[] = [];
    const signal: { wake: (() => void) | null } = { wake: null };
    let done = false;
    let failure: unknown = null;
    const pump = (async () => {
      try {
        for await (const event of subscription) {
          queue.push(event);
          signal.wake?.();
        }
      } catch (error) {
        failure = error;
      } finally {
        done = true;
        signal.wake?.();
      }
    })();
    try {
      while (!(done && queue.length === 0)) {
        if (queue.length === 0) {
          await new Promise<void>((resolve) => (signal.wake = resolve));
          signal.wake = null;
          continue;
        }
        await this.apply(queue.splice(0, MAX_BATCH));
      }
    } catch (error) {
      await subscription.close(); // do not leave the failed subscription pumping beside the next one
      await pump;
      throw error;
    }
    await pump;
    if (failure && !this.stopped) throw failure;
  }

  /**
   * A stored checkpoint behind what this runner applied means the views were
   * lost (e.g. Redis restarted empty) while no event arrived to reveal it:
   * end the subscription so that the follow loop resumes from the stored one.
   */
  private async watchCheckpoint(): Promise<void> {
    const applied = this.status.checkpoint;
    if (applied === null || this.stopped) return;
    try {
      const stored = await this.projections.checkpoint();
      if (stored !== null && stored >= BigInt(applied)) return;
      this.logger.warn({ applied, stored: stored?.toString() ?? null }, 'projection checkpoint went back; rebuilding views from it');
      this.status.checkpoint = stored?.toString() ?? null;
      await this.subscription?.close();
    } catch {
      // Unreachable store: the next apply reports it and the follow loop retries.
    }
  }

  private async apply(events: StoredEvent[]): Promise<void> {
    await this.projections.applyBatch(events.map(projectStored));
    const last = events[events.length - 1].position;
    this.status.checkpoint = last.toString();
    this.status.lastAppliedAt = new Date().toISOString();
    this.waiters.reached(last);
  }
}
