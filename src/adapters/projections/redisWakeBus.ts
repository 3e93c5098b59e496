/**
 * Wake bus on Redis pub/sub: channel `<namespace>:wake:<identity>`. The Redis
 * projection store publishes from its apply script, after the view change, so
 * publish() here is only for completeness (a direct PUBLISH). Subscriptions use
 * one dedicated connection; ioredis resubscribes every channel after a reconnect.
 * Wakes are hints: one missed while disconnected is recovered from the unread
 * view, which a client reads (the `sync` event) whenever it (re)connects.
 */
import type { Logger } from 'pino';
import type { WakeEvent } from '../../projections/viewChanges';
import type { Unsubscribe, WakeBus, WakeListener } from '../../projections/wakeBus';
import { closeRedis, redisCall, type RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

interface Channel {
  listeners: Set<WakeListener>;
  /** Resolves once Redis confirmed the SUBSCRIBE, so that no wake after subscribe() returns is missed. */
  ready: Promise<unknown>;
}

export class RedisWakeBus implements WakeBus {
  private readonly channels = new Map<string, Channel>();
  private subscriber: Promise<RedisClient> | null = null;
  private closed = false;

  constructor(
    private readonly publisher: RedisClient,
    private readonly openSubscriber: () => Promise<RedisClient>,
    private readonly keys: RedisKeys,
    private readonly logger: Logger,
  ) {}

  async publish(wakes: readonly WakeEvent[]): Promise<void> {
    if (wakes.length === 0) return;
    await redisCall('Redis wake bus', () =>
      Promise.all(wakes.map((wake) => this.publisher.publish(this.keys.wakeChannel(wake.recipient), JSON.stringify(wake)))),
    );
  }

  async subscribe(identity: string, listener: WakeListener): Promise<Unsubscribe> {
    if (this.closed) throw new Error('Redis wake bus is closed');
    const name = this.keys.wakeChannel(identity);
    let channel = this.channels.get(name);
    if (!channel) {
      const subscriber = await this.connection();
      channel = { listeners: new Set(), ready: redisCall('Redis wake bus (subscribe)', () => subscriber.subscribe(name)) };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    try {
      await channel.ready;
    } catch (error) {
      channel.listeners.delete(listener);
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
    if (channel.listeners.size > 0 || this.channels.get(name) !== channel) return;
    this.channels.delete(name);
    const subscriber = this.subscriber;
    if (subscriber && !this.closed) await (await subscriber).unsubscribe(name).catch(() => undefined);
  }

  private connection(): Promise<RedisClient> {
    if (!this.subscriber) {
      this.subscriber = this.openSubscriber().then((subscriber) => {
        subscriber.on('message', (channel: string, message: string) => this.dispatch(channel, message));
        subscriber.on('ready', () => this.logger.debug({ channels: this.channels.size }, 'wake subscriber (re)connected'));
        subscriber.on('reconnecting', () =>
          this.logger.warn('wake subscriber lost Redis; resubscribing on reconnect (clients resync from the unread view)'),
        );
        return subscriber;
      });
      this.subscriber.catch(() => (this.subscriber = null));
    }
    return this.subscriber;
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
