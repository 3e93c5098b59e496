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
  private readonly tokenIndexes = new WeakMap<RegistryState, Map<string, RegisteredAgent>>();

  constructor(@inject(TOKENS.CommandHandler) private readonly handler: CommandHandler) {}

  /**
   * The registry now: a catch-up read from the cached revision. Deliberately
   * not shared between concurrent callers: a read begun before a registration
   * was acknowledged must not answer a send that began after it.
   */
  async current(): Promise<RegistryState> {
    return (await this.handler.load(AGENT_REGISTRY_STREAM, registryModel)).state;
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
