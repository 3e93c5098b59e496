/**
 * `expect(actual).toEqual(expected)` for large values (the views of a 10,000-event log): answered at once when the two
 * are deeply strictly equal, which implies toEqual (same prototypes, keys and values); otherwise jest's own toEqual
 * decides, with its diff. jest's equality walks every property through its testers: on those views it took seconds per
 * comparison, a good part of the slowest tests, for the same verdict.
 */
import { isDeepStrictEqual } from 'node:util';

export function expectEqualLarge(actual: unknown, expected: unknown): void {
  if (isDeepStrictEqual(actual, expected)) return;
  expect(actual).toEqual(expected);
}
