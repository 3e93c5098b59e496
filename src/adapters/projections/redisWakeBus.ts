/**
 * Wake bus on Redis pub/sub: channel `<namespace>:wake:<identity>`. The Redis
 * projection store publishes from its apply script, after the view change, so
 * publish() here is only for completeness (a direct PUBLISH). Subscriptions use
 * one dedicated connection; ioredis resubscribes every channel after a reconnect.
 * Wakes are hints: one missed while disconnected is recovered from the unread
 * view. A client reads it (the `sync` event) whenever it (re)connects; a
 * subscription that stayed open across the loss is told through its gap
 * listener once every channel is subscribed again (its wake stream sends a new
 * `sync`), since nothing else would tell it that wakes went missing.
 */
import type { Logger } from 'pino';
import type { WakeEvent } from '../../projections/viewChanges';
import type { Unsubscribe, WakeBus, WakeGapListener, WakeListener } from '../../projections/wakeBus';
import { closeRedis, redisCall, type RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

interface Channel {
  listeners: Set<WakeListener>;
  /** Per listener: told when the connection was lost and the channel is subscribed again. */
  gapListeners: Map<WakeListener, WakeGapListener>;
  /** Resolves once Redis confirmed the SUBSCRIBE, so that no wake after subscribe() returns is missed. */
  ready: Promise<unknown>;
}

/** PUBLISH run on the node of KEYS[1]'s hash tag (the key only routes the call). */
const PUBLISH_FROM_TAG = "return redis.call('PUBLISH', ARGV[1], ARGV[2])";

export class RedisWakeBus implements WakeBus {
  private readonly channels = new Map<string, Channel>();
  private subscriber: Promise<RedisClient> | null = null;
  private closed = false;
  /** The subscriber connection went away since it last had every channel subscribed. */
  private lost = false;
  /** This outage was logged (once; the reconnect attempts that follow are not). */
  private outageWarned = false;

  constructor(
    private readonly publisher: RedisClient,
    private readonly openSubscriber: () => Promise<RedisClient>,
    private readonly keys: RedisKeys,
    private readonly logger: Logger,
  ) {}

  /**
   * Published from the node the apply script publishes that kind of wake from (a script keyed by that hash tag:
   * PUBLISH itself takes no key, and ioredis sends it to any node of a Cluster): a message wake from the recipient's
   * tag, a task or reply-overdue wake from the global tag. A subscriber then gets these in order with the script's:
   * pub/sub keeps order per publishing node, not across nodes, and a flush marker published from another node could
   * overtake a wake published before it (seen in the Cluster contract on a loaded machine). On a single node this
   * is one PUBLISH in a script.
   */
  async publish(wakes: readonly WakeEvent[]): Promise<void> {
    if (wakes.length === 0) return;
    await redisCall('Redis wake bus', () =>
      Promise.all(
        wakes.map((wake) =>
          this.publisher.eval(
            PUBLISH_FROM_TAG,
            1,
            // Only routes the call (neither read nor written): a key of the tag the script publishes this wake from.
            wake.type === 'wake/message' ? this.keys.wakeStreams(wake.recipient) : this.keys.active,
            this.keys.wakeChannel(wake.recipient),
            JSON.stringify(wake),
          ),
        ),
      ),
    );
  }

  async subscribe(identity: string, listener: WakeListener, onGap?: WakeGapListener): Promise<Unsubscribe> {
    if (this.closed) throw new Error('Redis wake bus is closed');
    const name = this.keys.wakeChannel(identity);
    let channel = this.channels.get(name);
    if (!channel) {
      const subscriber = await this.connection();
      channel = {
        listeners: new Set(),
        gapListeners: new Map(),
        ready: redisCall('Redis wake bus (subscribe)', () => subscriber.subscribe(name)),
      };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    if (onGap) channel.gapListeners.set(listener, onGap);
    try {
      await channel.ready;
    } catch (error) {
      channel.listeners.delete(listener);
      channel.gapListeners.delete(listener);
      if (channel.listeners.size === 0 && this.channels.get(name) === channel) this.channels.delete(name);
      throw error;
    }
    return async () => this.unsubscribe(name, channel, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.channels.clear();
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await closeRedis(await subscriber);
    await closeRedis(this.publisher);
  }

  private async unsubscribe(name: string, channel: Channel, listener: WakeListener): Promise<void> {
    channel.listeners.delete(listener);
    channel.gapListeners.delete(listener);
    if (channel.listeners.size > 0 || this.channels.get(name) !== channel) return;
    this.channels.delete(name);
    const subscriber = this.subscriber;
    if (subscriber && !this.closed) await (await subscriber).unsubscribe(name).catch(() => undefined);
  }

  private connection(): Promise<RedisClient> {
    if (!this.subscriber) {
      this.subscriber = this.openSubscriber().then((subscriber) => {
        subscriber.on('message', (channel: string, message: string) => this.dispatch(channel, message));
        subscriber.on('ready', () => {
          this.logger.debug({ channels: this.channels.size }, 'wake subscriber (re)connected');
          if (this.lost) void this.resubscribed(subscriber);
        });
        subscriber.on('close', () => (this.lost = true));
        // Said once per outage (ioredis tries again every 500 ms at most: a warning each time buried the log); the
        // line saying it is back closes it (resubscribed).
        subscriber.on('reconnecting', () => {
          if (this.outageWarned) return this.logger.debug('wake subscriber: reconnecting to Redis');
          this.outageWarned = true;
          this.logger.warn(
            'wake subscriber lost Redis; resubscribing on reconnect (open wake streams then resync from the unread view)',
          );
        });
        return subscriber;
      });
      this.subscriber.catch(() => (this.subscriber = null));
    }
    return this.subscriber;
  }

  /**
   * After a reconnect: ioredis has sent the SUBSCRIBE of every channel again; one more (idempotent) is
   * answered after it, so once it answers no later wake is missed, and the subscriptions that stayed open
   * are told that the ones published meanwhile were.
   */
  private async resubscribed(subscriber: RedisClient): Promise<void> {
    const names = [...this.channels.keys()];
    if (names.length > 0) {
      try {
        await redisCall('Redis wake bus (resubscribe)', () => subscriber.subscribe(...names));
      } catch {
        return; // lost again: the next 'ready' tries again
      }
    }
    this.lost = false;
    this.outageWarned = false;
    this.logger.info({ channels: names.length }, 'wake subscriber back on Redis; open wake streams resync from the unread view');
    for (const name of names) {
      for (const onGap of this.channels.get(name)?.gapListeners.values() ?? []) {
        try {
          onGap();
        } catch {
          // A subscriber's failure is its own.
        }
      }
    }
  }

  private dispatch(name: string, message: string): void {
    const channel = this.channels.get(name);
    if (!channel) return;
    let wake: WakeEvent;
    try {
      wake = JSON.parse(message) as WakeEvent;
    } catch {
      this.logger.warn({ channel: name }, 'ignored a wake that is not JSON');
      return;
    }
    for (const listener of channel.listeners) {
      try {
        listener(wake);
      } catch {
        // A subscriber's failure is its own; the inbox remains the authority.
      }
    }
  }
}
