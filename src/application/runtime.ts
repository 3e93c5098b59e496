/** Time and ids come from here, injected, so that deciders stay pure and tests can fix them. */
import { newCommandId } from '../events/eventIds';

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  next(): string;
}

export const systemClock: Clock = { now: () => new Date() };
/** Command ids in time order (events/eventIds.ts says why). */
export const timeOrderedIds: IdGenerator = { next: newCommandId };
