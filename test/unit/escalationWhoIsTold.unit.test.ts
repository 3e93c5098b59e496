/**
 * The escalation lines name whom they nudge; a broadcast's escalation can concern a thousand recipients, so the
 * line names the first few and counts the rest, while the fields list every one.
 */
import { whoIsTold } from '../../src/heartbeat/escalationClaims';

const agents = (n: number) => Array.from({ length: n }, (_, i) => `@a${i}`);

test('a few recipients are all named', () => {
  const { nudged, notNudged, told } = whoIsTold(['@c', '@d', '@e'], (identity) => identity !== '@d');
  expect({ nudged, notNudged }).toEqual({ nudged: ['@c', '@e'], notNudged: ['@d'] });
  expect(told).toBe('nudging @c, @e; not @d (retired, opted out or not registered)');
});

test('a thousand recipients: the line names five and counts the rest; the fields keep them all', () => {
  const recipients = agents(1000);
  const { nudged, notNudged, told } = whoIsTold(recipients, (identity) => identity !== '@a7');
  expect(nudged).toHaveLength(999);
  expect(notNudged).toEqual(['@a7']);
  expect(told).toBe('nudging @a0, @a1, @a2, @a3, @a4 and 994 more; not @a7 (retired, opted out or not registered)');
  expect(told.length).toBeLessThan(200);
});

test('nobody nudgeable among many: nobody is told, said in one short line', () => {
  const { nudged, told } = whoIsTold(agents(12), () => false);
  expect(nudged).toEqual([]);
  expect(told).toBe(
    'nobody is nudged: @a0, @a1, @a2, @a3, @a4 and 7 more (retired, opted out or not registered), so nobody is told',
  );
});
