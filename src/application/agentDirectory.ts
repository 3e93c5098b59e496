/** The registry as the write side knows it: broadcast audiences, strict recipients, token lookups. */
import { inject, injectable } from 'tsyringe';
import { foldRegistry, initialRegistryState, type RegisteredAgent, type RegistryState } from '../commands/agentRegistry';
import type { AgentEvent } from '../events/types';
import { AGENT_REGISTRY_STREAM } from '../events/streams';
import { TOKENS } from '../tokens';
import { isMailboxError } from '../errors';
import type { CommandHandler } from './commandHandler';
import type { Clock } from './runtime';
import type { StreamModel } from './streamLoader';

/** A token lookup may answer from a registry read this recent without touching the store (bounds how long a retirement done elsewhere takes to bite). */
const AUTH_FRESH_MS = 1000;

export const registryModel: StreamModel<RegistryState, AgentEvent> = { initial: initialRegistryState, fold: foldRegistry };

/** Why an agent's old credentials stopped working: open sessions authenticated with them should end. */
export type CredentialsChange = 'retired' | 'token_rotated';
export type CredentialsListener = (identity: string, change: CredentialsChange) => void;

@injectable()
export class AgentDirectory {
  private readonly tokenIndexes = new WeakMap<RegistryState, Map<string, RegisteredAgent>>();
  private readonly credentialsListeners = new Set<CredentialsListener>();
  private lastReadAt = 0;

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
    return state;
  }

  /**
   * Token lookups answer from a fresh enough read without I/O (authentication
   * is on every request). When the store is unavailable they fall back to the
   * last read, so that reads served from the projections keep working during
   * an event store outage; writes fail with UNAVAILABLE anyway.
   */
  async findByTokenHash(tokenHash: string): Promise<RegisteredAgent | null> {
    // The cached registry includes this process's own registrations and retirements.
    const cached = this.handler.peek<RegistryState>(AGENT_REGISTRY_STREAM);
    if (cached && this.clock.now().getTime() - this.lastReadAt < AUTH_FRESH_MS) {
      const known = this.indexOf(cached).get(tokenHash);
      if (known) return known;
    }
    let state: RegistryState;
    try {
      state = await this.current();
    } catch (error) {
      if (!cached || !isMailboxError(error) || error.code !== 'UNAVAILABLE') throw error;
      state = cached;
    }
    return this.indexOf(state).get(tokenHash) ?? null;
  }

  /**
   * "Agent credentials changed": called by the write side once a retirement or a token rotation is
   * committed (this process). Subscribers (open wake streams, MCP sessions) end what the old token opened.
   * Returns the unsubscribe function.
   */
  onCredentialsChanged(listener: CredentialsListener): () => void {
    this.credentialsListeners.add(listener);
    return () => this.credentialsListeners.delete(listener);
  }

  credentialsChanged(identity: string, change: CredentialsChange): void {
    for (const listener of [...this.credentialsListeners]) listener(identity, change);
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
