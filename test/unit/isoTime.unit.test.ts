/** msCeiling: the first whole millisecond not before an ISO time, however many fraction digits it has. */
import { msCeiling } from '../../src/commands/isoTime';

const ms = (iso: string) => new Date(iso).getTime();

test.each([
  ['2030-01-01T12:00:00Z', ms('2030-01-01T12:00:00.000Z')],
  ['2030-01-01T12:00:00.5Z', ms('2030-01-01T12:00:00.500Z')],
  ['2030-01-01T12:00:00.123Z', ms('2030-01-01T12:00:00.123Z')],
  ['2030-01-01T12:00:00.123000000Z', ms('2030-01-01T12:00:00.123Z')],
  ['2030-01-01T12:00:00.123000001Z', ms('2030-01-01T12:00:00.124Z')],
  ['2030-01-01T12:00:00.999999Z', ms('2030-01-01T12:00:01.000Z')],
  ['2030-01-01T12:00:00.0001+01:00', ms('2030-01-01T11:00:00.001Z')],
  ['1960-01-01T12:00:00.0005Z', ms('1960-01-01T12:00:00.001Z')],
])('%s -> the millisecond %d', (iso, expected) => {
  expect(msCeiling(iso)).toBe(expected);
});
