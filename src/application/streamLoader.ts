/**
 * Reads a stream and folds it into state, remembering the fold so that the
 * next load reads only what was appended since. The write side (CommandHandler)
 * and the read side (MailboxQueries) each own one: the read side needs no part
 * of the command path to tell a message's story.
 */
import type { EventStore } from '../events/eventStore';
import type { MailboxEvent } from '../events/types';
import { StreamStateCache, type CacheBounds, type CachedState } from './streamStateCache';

export interface StreamModel<S, E extends MailboxEvent> {
  initial: () => S;
  fold: (state: S, events: readonly E[]) => S;
}

export class StreamLoader {
  private readonly cache: StreamStateCache;

  constructor(
    private readonly store: EventStore,
    bounds: CacheBounds,
  ) {
    this.cache = new StreamStateCache(bounds);
  }

  /** The remembered state of a stream without any I/O (it includes what this loader was told was appended). */
  peek<S>(streamName: string): CachedState<S> | undefined {
    return this.cache.get<S>(streamName);
  }

  /** Current state of a stream: the remembered fold plus whatever was appended since. */
  async load<S, E extends MailboxEvent>(streamName: string, model: StreamModel<S, E>): Promise<CachedState<S>> {
    const cached = this.cache.get<S>(streamName);
    const from = cached?.revision == null ? 0n : cached.revision + 1n;
    const fresh = await this.store.readStream(streamName, from);
    if (cached && fresh.length === 0) return cached;
    const state = model.fold(cached?.state ?? model.initial(), fresh as unknown as E[]);
    const entry = { state, revision: fresh.length ? fresh[fresh.length - 1].revision : (cached?.revision ?? null) };
    this.cache.set(streamName, entry);
    return entry;
  }

  /** State the caller itself just appended (its append told it the new revision). */
  remember<S>(streamName: string, entry: CachedState<S>): void {
    this.cache.set(streamName, entry);
  }
}
