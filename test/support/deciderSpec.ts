/**
 * Given/when/then specifications for pure deciders (after emmett's
 * deciderSpecification): given(past events).when(command).then(new events),
 * .thenNothing(), .thenFails(code, details) or .thenThrows(check).
 * Every outcome is decided twice on separately folded states, so a decider
 * that reads the clock, random ids or mutates its state fails the spec.
 */
import { MailboxError, type ErrorCode } from '../../src/errors';

export interface Decider<Command, State, Event> {
  initialState: () => State;
  evolve: (state: State, events: readonly Event[]) => State;
  decide: (command: Command, state: State) => Event[] | MailboxError;
}

export interface WhenSpec<Event> {
  /** The decider returns exactly these events, in this order. */
  then(expected: Event[]): void;
  /** The decider accepts the command and records nothing (idempotent repeat). */
  thenNothing(): void;
  /** The decider rejects with this code; `details` must be a subset of the error envelope. */
  thenFails(code: ErrorCode, details?: Record<string, unknown>): MailboxError;
  /** The decider throws (a programming error, not a domain rejection). */
  thenThrows(check?: (error: unknown) => void): void;
}

export interface GivenSpec<Command, Event> {
  when(command: Command): WhenSpec<Event>;
}

export const DeciderSpecification = {
  for<Command, State, Event>(decider: Decider<Command, State, Event>) {
    return (given: Event[] = []): GivenSpec<Command, Event> => ({
      when(command: Command): WhenSpec<Event> {
        const run = (): Event[] | MailboxError => {
          const history = structuredClone(given);
          const state = decider.evolve(decider.initialState(), history);
          const outcome = decider.decide(structuredClone(command), state);
          // The decider must not have touched the history it was given.
          expect(history).toEqual(given);
          return outcome;
        };
        const decideTwice = (): Event[] | MailboxError => {
          const first = run();
          const second = run();
          if (first instanceof MailboxError && second instanceof MailboxError) {
            expect(second.envelope).toEqual(first.envelope);
          } else {
            expect(second).toEqual(first); // pure: same input, same output
          }
          return first;
        };
        return {
          then(expected) {
            const outcome = decideTwice();
            if (outcome instanceof MailboxError) {
              throw new Error(`Expected events, but the decider failed with ${JSON.stringify(outcome.envelope)}`);
            }
            expect(outcome).toEqual(expected);
          },
          thenNothing() {
            const outcome = decideTwice();
            if (outcome instanceof MailboxError) {
              throw new Error(`Expected no events, but the decider failed with ${JSON.stringify(outcome.envelope)}`);
            }
            expect(outcome).toEqual([]);
          },
          thenFails(code, details = {}) {
            const outcome = decideTwice();
            if (!(outcome instanceof MailboxError)) {
              throw new Error(`Expected ${code}, but the decider returned ${JSON.stringify(outcome)}`);
            }
            expect(outcome.envelope).toMatchObject({ code, ...details });
            expect(typeof outcome.envelope.error).toBe('string');
            expect(outcome.envelope.message.length).toBeGreaterThan(0);
            return outcome;
          },
          thenThrows(check) {
            let thrown: unknown = null;
            try {
              run();
            } catch (error) {
              thrown = error;
            }
            if (thrown === null) throw new Error('Expected the decider to throw, but it returned');
            check?.(thrown);
          },
        };
      },
    });
  },
};
