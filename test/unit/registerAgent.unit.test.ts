/** RegisterAgent: given/when/then on the registry stream. */
import { decideRegisterAgent, foldRegistry, initialRegistryState, type RegisterAgent } from '../../src/commands/agentRegistry';
import type { AgentEvent } from '../../src/events/types';
import { DeciderSpecification } from '../support/deciderSpec';
import { meta, registered, retired, T1 } from './fixtures/domain';

const given = DeciderSpecification.for<RegisterAgent, ReturnType<typeof initialRegistryState>, AgentEvent>({
  initialState: initialRegistryState,
  evolve: foldRegistry,
  decide: decideRegisterAgent,
});
const register = (identity: string, role: 'agent' | 'auditor' = 'agent'): RegisterAgent => ({
  type: 'RegisterAgent',
  data: { identity, role, tokenHash: `hash-of-${identity}` },
  metadata: meta(),
});

describe('RegisterAgent', () => {
  it('registers a new identity with its role, token hash and the command time', () => {
    given([])
      .when(register('@neo-gpt'))
      .then([
        {
          type: 'AgentRegistered',
          data: { identity: '@neo-gpt', role: 'agent', tokenHash: 'hash-of-@neo-gpt', registeredAt: T1 },
        },
      ]);
  });

  it('registers an auditor', () => {
    given([registered('@alice')])
      .when(register('@audit', 'auditor'))
      .then([
        { type: 'AgentRegistered', data: { identity: '@audit', role: 'auditor', tokenHash: 'hash-of-@audit', registeredAt: T1 } },
      ]);
  });

  it('refuses an identity that is already registered: AGENT_EXISTS', () => {
    given([registered('@alice'), registered('@bob')])
      .when(register('@bob'))
      .thenFails('AGENT_EXISTS', { identity: '@bob' });
  });

  it('never reuses a retired identity', () => {
    const error = given([registered('@bob'), retired('@bob')])
      .when(register('@bob'))
      .thenFails('AGENT_EXISTS', { identity: '@bob' });
    expect(error.message).toMatch(/retired/);
  });

  it('refuses a case variant of a registered identity (a mix-up waiting to happen), naming the existing one', () => {
    const error = given([registered('@bob')])
      .when(register('@Bob'))
      .thenFails('AGENT_EXISTS', { identity: '@Bob', existing: '@bob' });
    expect(error.message).toMatch(/differs from it only in case/);
    given([registered('@bob'), retired('@bob')])
      .when(register('@BOB'))
      .thenFails('AGENT_EXISTS', { identity: '@BOB', existing: '@bob' });
  });

  it('identities stay case-sensitive: case variants a log already holds are two agents, and a third is refused', () => {
    const state = foldRegistry(initialRegistryState(), [registered('@bob'), registered('@Bob')]);
    expect([...state.agents.keys()]).toEqual(['@bob', '@Bob']);
    given([registered('@bob'), registered('@Bob')])
      .when(register('@BOB'))
      .thenFails('AGENT_EXISTS', { identity: '@BOB', existing: '@bob' });
  });
});
