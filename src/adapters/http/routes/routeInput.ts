/** Routes whose whole input is the path still refuse a body or query they would otherwise ignore. */
import { z } from 'zod';
import { parseInput } from '../../../commands/validation';

const nothing = z.strictObject({});

export function noExtraInput(value: unknown, what: string): void {
  if (value === undefined || value === null) return;
  parseInput(nothing, value, what);
}
