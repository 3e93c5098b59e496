/** Time and ids come from here, injected, so that deciders stay pure and tests can fix them. */
import { randomUUID } from 'node:crypto';

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  next(): string;
}

export const systemClock: Clock = { now: () => new Date() };
export const randomIds: IdGenerator = { next: () => randomUUID() };
