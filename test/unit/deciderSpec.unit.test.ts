/** The spec helper itself must be able to fail: an impure, wrong or silent decider is caught. */
import { MailboxError } from '../../src/errors';
import { DeciderSpecification } from '../support/deciderSpec';

type Counter = { count: number };
const counter = (decide: (command: number, state: Counter) => number[] | MailboxError) =>
  DeciderSpecification.for<number, Counter, number>({
    initialState: () => ({ count: 0 }),
    evolve: (state, events) => ({ count: events.reduce((sum, e) => sum + e, state.count) }),
    decide,
  });

const add = counter((n, state) =>
  n < 0 ? new MailboxError('VALIDATION_FAILED', 'Bad', 'n must be >= 0', { field: 'n' }) : [state.count + n],
);

describe('DeciderSpecification', () => {
  it('passes when the decider returns the expected events', () => {
    add([1, 2]).when(4).then([7]);
    add([1]).when(-1).thenFails('VALIDATION_FAILED', { field: 'n' });
  });

  it('fails on other events, an unexpected error or the wrong code', () => {
    expect(() => add([1]).when(1).then([3])).toThrow();
    expect(() => add([1]).when(-1).then([1])).toThrow(/VALIDATION_FAILED/);
    expect(() => add([1]).when(1).thenFails('VALIDATION_FAILED')).toThrow(/returned/);
    expect(() => add([1]).when(-1).thenFails('NOT_FOUND')).toThrow();
    expect(() => add([1]).when(1).thenNothing()).toThrow();
  });

  it('fails a decider that is not deterministic', () => {
    let calls = 0;
    const impure = counter(() => [++calls]);
    expect(() => impure([]).when(0).then([1])).toThrow();
  });

  it('thenThrows requires a throw', () => {
    const throwing = counter(() => {
      throw new Error('boom');
    });
    throwing([])
      .when(0)
      .thenThrows((error) => expect((error as Error).message).toBe('boom'));
    expect(() => add([]).when(0).thenThrows()).toThrow(/returned/);
  });
});
