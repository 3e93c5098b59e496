/** The registry as the write side knows it: broadcast audiences, strict recipients, token lookups. */
import { inject, injectable } from 'tsyringe';
import {
  foldRegistry,
  initialRegistryState,
  type RegisteredAgent,
  type RegistryState,
  type ReplacedToken,
} from '../commands/agentRegistry';
import type { AgentEvent } from '../events/types';
import { AGENT_REGISTRY_STREAM } from '../events/streams';
import { TOKENS } from '../tokens';
import { isMailboxError } from '../errors';
import { sleep } from '../support/retry';
import type { CommandHandler } from './commandHandler';
import type { Clock } from './runtime';
import type { StreamModel } from './streamLoader';

/** A token lookup may answer from a registry read this recent without touching the store (bounds how long a retirement done elsewhere takes to bite). */
const AUTH_FRESH_MS = 1000;

/** While the store is unavailable, how long a token lookup waits for the read that looks whether it is back. */
const PROBE_WAIT_MS = 250;

/** Told the identity whose token stopped working (retired, or its token rotated), so that what the old token opened can be cut. */
export type RevocationListener = (identity: string, reason: string) => void;

export const registryModel: StreamModel<RegistryState, AgentEvent> = { initial: initialRegistryState, fold: foldRegistry };

@injectable()
export class AgentDirectory {
  private readonly tokenIndexes = new WeakMap<RegistryState, Map<string, RegisteredAgent>>();
  private lastReadAt = 0;
  /** When the last read for knownSparingly began (succeeded or not), and that read while it runs. */
  private sparedAt = 0;
  private sparing: Promise<void> | null = null;
  /**
   * Set when a token lookup's registry read found the store unavailable, cleared by the next read that succeeds: while
   * set, lookups answer from the last read at once, and one read at a time (`probing`) looks whether the store is back.
   */
  private unreadable = false;
  private probing: Promise<void> | null = null;
  private readonly revocationListeners = new Set<RevocationListener>();
  /** Retired identities seen in a registry read, to notice retirements done by another node. */
  private knownRetired: Set<string> | null = null;
  /** The registry state last looked through for retirements: a state read again unchanged has none to add. */
  private noticedIn: RegistryState | null = null;

  constructor(
    @inject(TOKENS.CommandHandler) private readonly handler: CommandHandler,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  /**
   * The registry now: a catch-up read from the cached revision. Deliberately
   * not shared between concurrent callers: a read begun before a registration
   * was acknowledged must not answer a send that began after it.
   */
  async current(): Promise<RegistryState> {
    const { state } = await this.handler.load(AGENT_REGISTRY_STREAM, registryModel);
    this.lastReadAt = this.clock.now().getTime();
    this.unreadable = false;
    this.noticeRetirements(state);
    return state;
  }

  /** Subscribes to revocations; returns the unsubscribe. */
  onRevoked(listener: RevocationListener): () => void {
    this.revocationListeners.add(listener);
    return () => this.revocationListeners.delete(listener);
  }

  /**
   * `identity`'s token no longer works (called at once by the command that retired it or rotated its token): the next
   * token lookup reads the registry again, and listeners cut what the identity holds open.
   */
  revoked(identity: string, reason: string): void {
    this.lastReadAt = 0;
    this.knownRetired?.add(identity);
    for (const listener of this.revocationListeners) {
      try {
        listener(identity, reason);
      } catch {
        // A listener's failure is its own: the retirement stands, and others must still hear of it.
      }
    }
  }

  private noticeRetirements(state: RegistryState): void {
    // Every send reads the registry: looking through every agent each time cost O(agents) per send. The stream
    // loader answers the same state object while no registry event was appended, and such a state holds no news.
    if (state === this.noticedIn) return;
    this.noticedIn = state;
    const retired = [...state.agents.values()].filter((agent) => agent.retiredAt !== null).map((agent) => agent.identity);
    const known = this.knownRetired;
    this.knownRetired = new Set(retired);
    if (!known) return; // the first read: nothing of this process was opened before it
    for (const identity of retired) if (!known.has(identity)) this.revoked(identity, 'agent retired');
  }

  /**
   * Token lookups answer from a fresh enough read without I/O (authentication
   * is on every request). When the store is unavailable they fall back to the
   * last read, so that reads served from the projections keep working during
   * an event store outage; writes fail with UNAVAILABLE anyway.
   */
  async findByTokenHash(tokenHash: string): Promise<RegisteredAgent | null> {
    return this.lookUp((state) => this.indexOf(state).get(tokenHash));
  }

  /**
   * The agent registered as `identity` (retired or not), or null: from a read at most a second old, as a token lookup
   * answers (with the store unavailable, from the last read). Asked for the watches of a client without a token.
   */
  async findByIdentity(identity: string): Promise<RegisteredAgent | null> {
    return this.lookUp((state) => state.agents.get(identity));
  }

  /**
   * One agent found in the registry: in the cached registry while it is at most AUTH_FRESH_MS old (it includes this
   * process's own registrations and retirements), else in a fresh read; with the store unavailable, in the last read
   * (at once, once a read has found it unavailable, until one succeeds).
   */
  private async lookUp(find: (state: RegistryState) => RegisteredAgent | undefined): Promise<RegisteredAgent | null> {
    const cached = this.handler.peek<RegistryState>(AGENT_REGISTRY_STREAM);
    if (cached && this.clock.now().getTime() - this.lastReadAt < AUTH_FRESH_MS) {
      const known = find(cached);
      if (known) return known;
    }
    if (cached && this.unreadable) {
      // The store did not answer the last read: each lookup waited out its deadline again (5 s on a hung EventStoreDB,
      // every read of an inbox served from the views) before it answered from the last read, as it would now. One read
      // at a time looks whether it is back; a lookup waits for it briefly, so a store back answers from a fresh read.
      const answered = new AbortController(); // the wait's timer ends with the probe, not 250 ms later
      await Promise.race([this.probe(), sleep(PROBE_WAIT_MS, answered.signal)]);
      answered.abort();
      return find(this.handler.peek<RegistryState>(AGENT_REGISTRY_STREAM) ?? cached) ?? null;
    }
    let state: RegistryState;
    try {
      state = await this.current();
    } catch (error) {
      if (!cached || !isMailboxError(error) || error.code !== 'UNAVAILABLE') throw error;
      this.unreadable = true;
      state = cached;
    }
    return find(state) ?? null;
  }

  /** One registry read at a time while the store is unavailable: the first that succeeds ends the fallback. */
  private probe(): Promise<void> {
    if (this.probing !== null) return this.probing;
    this.probing = this.readSettled().finally(() => {
      this.probing = null;
    });
    return this.probing;
  }

  /** A registry read whose failure is not thrown (the callers answer from the last read then). */
  private readSettled(): Promise<void> {
    return this.current().then(
      () => undefined,
      () => undefined,
    );
  }

  /** Whether the last registry read holds `tokenHash` as an agent's (retired or not), without reading. */
  knownInLastRead(tokenHash: string): boolean {
    const cached = this.handler.peek<RegistryState>(AGENT_REGISTRY_STREAM);
    return cached !== undefined && this.indexOf(cached).has(tokenHash);
  }

  /**
   * Whether `tokenHash` is an agent's in a registry read about a second old at most, for callers that may not cost a
   * read each (a client address over its refused tokens, whose unknown tokens are refused unread): a staler registry is
   * read once for all of them, and not again within AUTH_FRESH_MS even when that read failed. So a token registered
   * through another node is still known to them, while they cost about one read a second however many they are.
   */
  async knownSparingly(tokenHash: string): Promise<boolean> {
    const now = this.clock.now().getTime();
    const fresh = now - Math.max(this.lastReadAt, this.sparedAt) < AUTH_FRESH_MS;
    if (!fresh || this.handler.peek(AGENT_REGISTRY_STREAM) === undefined) {
      if (this.sparing === null && now - this.sparedAt >= AUTH_FRESH_MS) {
        this.sparedAt = now;
        // Unreadable: answered from the last read, as findByTokenHash does.
        this.sparing = this.readSettled().finally(() => {
          this.sparing = null;
        });
      }
      await this.sparing;
    }
    return this.knownInLastRead(tokenHash);
  }

  /**
   * Whose token `tokenHash` was, if a rotation replaced it (asked only after findByTokenHash found no agent, so the
   * registry was just read).
   */
  replacedToken(tokenHash: string): ReplacedToken | null {
    return this.handler.peek<RegistryState>(AGENT_REGISTRY_STREAM)?.replacedTokens.get(tokenHash) ?? null;
  }

  private indexOf(state: RegistryState): Map<string, RegisteredAgent> {
    let index = this.tokenIndexes.get(state);
    if (!index) {
      index = new Map([...state.agents.values()].map((agent) => [agent.tokenHash, agent]));
      this.tokenIndexes.set(state, index);
    }
    return index;
  }
}
