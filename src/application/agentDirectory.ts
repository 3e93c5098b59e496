/** The registry as the write side knows it: broadcast audiences, strict recipients, token lookups. */
import { inject, injectable } from 'tsyringe';
import { foldRegistry, initialRegistryState, type RegisteredAgent, type RegistryState } from '../commands/agentRegistry';
import type { AgentEvent } from '../events/types';
import { AGENT_REGISTRY_STREAM } from '../events/streams';
import { TOKENS } from '../tokens';
import type { CommandHandler, StreamModel } from './commandHandler';

export const registryModel: StreamModel<RegistryState, AgentEvent> = { initial: initialRegistryState, fold: foldRegistry };

@injectable()
export class AgentDirectory {
  private inFlight: Promise<RegistryState> | null = null;
  private readonly tokenIndexes = new WeakMap<RegistryState, Map<string, RegisteredAgent>>();

  constructor(@inject(TOKENS.CommandHandler) private readonly handler: CommandHandler) {}

  /** The registry now (catch-up read); concurrent callers share one read. */
  current(): Promise<RegistryState> {
    if (!this.inFlight) {
      this.inFlight = this.handler.load(AGENT_REGISTRY_STREAM, registryModel)
        .then(({ state }) => state)
        .finally(() => (this.inFlight = null));
    }
    return this.inFlight;
  }

  async findByTokenHash(tokenHash: string): Promise<RegisteredAgent | null> {
    const state = await this.current();
    let index = this.tokenIndexes.get(state);
    if (!index) {
      index = new Map([...state.agents.values()].map((agent) => [agent.tokenHash, agent]));
      this.tokenIndexes.set(state, index);
    }
    return index.get(tokenHash) ?? null;
  }
}
