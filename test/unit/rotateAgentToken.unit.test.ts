/** RotateAgentToken: given/when/then on the registry stream; the new hash replaces the old one in the registry state. */
import {
  decideRotateAgentToken,
  foldRegistry,
  initialRegistryState,
  type RotateAgentToken,
} from '../../src/commands/agentRegistry';
import type { AgentEvent, AgentTokenRotated } from '../../src/events/types';
import { DeciderSpecification } from '../support/deciderSpec';
import { meta, registered, retired, T1, T2 } from './fixtures/domain';

const given = DeciderSpecification.for<RotateAgentToken, ReturnType<typeof initialRegistryState>, AgentEvent>({
  initialState: initialRegistryState,
  evolve: foldRegistry,
  decide: decideRotateAgentToken,
});
const rotate = (identity: string, tokenHash = 'new-hash'): RotateAgentToken => ({
  type: 'RotateAgentToken',
  data: { identity, tokenHash },
  metadata: meta(),
});
const rotated = (identity: string, tokenHash: string, at = T1): AgentTokenRotated => ({
  type: 'AgentTokenRotated',
  data: { identity, tokenHash, rotatedAt: at },
});

describe('RotateAgentToken', () => {
  it('records the new token hash (never the token) at the command time', () => {
    given([registered('@alice'), registered('@bob'), registered('@carol')])
      .when(rotate('@bob', 'hash-2'))
      .then([{ type: 'AgentTokenRotated', data: { identity: '@bob', tokenHash: 'hash-2', rotatedAt: T1 } }]);
  });

  it('rotates again after a rotation (each rotation is its own event)', () => {
    given([registered('@bob'), rotated('@bob', 'hash-2')])
      .when(rotate('@bob', 'hash-3'))
      .then([{ type: 'AgentTokenRotated', data: { identity: '@bob', tokenHash: 'hash-3', rotatedAt: T1 } }]);
  });

  it('an unknown identity: AGENT_NOT_FOUND', () => {
    given([registered('@alice')])
      .when(rotate('@bob'))
      .thenFails('AGENT_NOT_FOUND', { identity: '@bob' });
  });

  it('a retired agent gets no new token: FORBIDDEN, saying it was retired', () => {
    given([registered('@bob'), retired('@bob', T2)])
      .when(rotate('@bob'))
      .thenFails('FORBIDDEN', { identity: '@bob', retiredAt: T2 });
  });

  it("the fold replaces only that agent's hash; the others keep theirs", () => {
    const state = foldRegistry(initialRegistryState(), [
      registered('@alice'),
      registered('@bob'),
      registered('@carol'),
      rotated('@bob', 'hash-2'),
    ]);
    expect([...state.agents.values()].map((a) => [a.identity, a.tokenHash])).toEqual([
      ['@alice', 'hash-of-@alice'],
      ['@bob', 'hash-2'],
      ['@carol', 'hash-of-@carol'],
    ]);
    expect(state.agents.get('@bob')?.registeredAt).toBe(registered('@bob').data.registeredAt);
  });

  it('the fold remembers whose each replaced hash was, and when (its holder is told so, not "not valid")', () => {
    const state = foldRegistry(initialRegistryState(), [
      registered('@alice'),
      registered('@bob'),
      rotated('@bob', 'hash-2', T1),
      rotated('@bob', 'hash-3', T2),
    ]);
    expect([...state.replacedTokens]).toEqual([
      ['hash-of-@bob', { identity: '@bob', replacedAt: T1 }],
      ['hash-2', { identity: '@bob', replacedAt: T2 }],
    ]);
    expect(state.agents.get('@bob')?.tokenHash).toBe('hash-3'); // the current one is no replaced one
  });
});
