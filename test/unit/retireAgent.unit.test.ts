/** RetireAgent: given/when/then on the registry stream, and what retirement means for audiences. */
import {
  activeAgents,
  decideRetireAgent,
  foldRegistry,
  initialRegistryState,
  type RetireAgent,
} from '../../src/commands/agentRegistry';
import type { AgentEvent } from '../../src/events/types';
import { DeciderSpecification } from '../support/deciderSpec';
import { meta, registered, retired, T1 } from './fixtures/domain';

const given = DeciderSpecification.for<RetireAgent, ReturnType<typeof initialRegistryState>, AgentEvent>({
  initialState: initialRegistryState,
  evolve: foldRegistry,
  decide: decideRetireAgent,
});
const retire = (identity: string): RetireAgent => ({ type: 'RetireAgent', data: { identity }, metadata: meta() });

describe('RetireAgent', () => {
  it('retires a registered agent at the command time', () => {
    given([registered('@alice'), registered('@bob')])
      .when(retire('@bob'))
      .then([{ type: 'AgentRetired', data: { identity: '@bob', retiredAt: T1 } }]);
  });

  it('an unknown identity: AGENT_NOT_FOUND', () => {
    given([registered('@alice')])
      .when(retire('@bob'))
      .thenFails('AGENT_NOT_FOUND', { identity: '@bob' });
  });

  it('retiring twice records nothing new (idempotent)', () => {
    given([registered('@bob'), retired('@bob')])
      .when(retire('@bob'))
      .thenNothing();
  });

  it('a retired agent leaves the active set; the others stay', () => {
    const state = foldRegistry(initialRegistryState(), [
      registered('@alice'),
      registered('@bob'),
      registered('@carol'),
      registered('@audit', 'auditor'),
      retired('@bob'),
    ]);
    expect(activeAgents(state).map((a) => a.identity)).toEqual(['@alice', '@carol']);
    expect(state.agents.get('@bob')?.retiredAt).not.toBeNull();
  });

  it('an unknown event in the registry stream is a loud error, never skipped', () => {
    const bogus = { type: 'AgentRenamed', data: {}, revision: 3n } as unknown as AgentEvent;
    given([registered('@bob'), bogus])
      .when(retire('@bob'))
      .thenThrows((error) => expect((error as Error).message).toMatch(/Unexpected registry event type AgentRenamed/));
  });
});
