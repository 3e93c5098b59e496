/**
 * StoreOutage, the shape the projector, the heartbeat and the task sweeper share: a store that does not answer is one
 * warn line without a stack, the failures after it at debug, one info line when it answers again; any other failure is
 * left to the caller.
 */
import pino from 'pino';
import { MailboxError, operatorNeeded, unavailable } from '../../src/errors';
import { StoreOutage } from '../../src/support/storeOutage';

const LINES = {
  down: 'store down',
  stillDown: 'store still down',
  back: 'store back',
  stoppedAsking: 'stopped asking',
  failuresField: 'failedPasses',
};

function outageOnClock() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let now = 1_000;
  const outage = new StoreOutage(logger, () => now, LINES);
  return { outage, lines, advance: (ms: number) => (now += ms) };
}

test('an outage is one warn line with the reason and no stack, then debug lines with their fields, then one info line', () => {
  const { outage, lines, advance } = outageOnClock();
  const down = unavailable('Redis projections', new Error('Command timed out'));
  expect(outage.failed(down)).toBe(true);
  advance(400);
  expect(outage.failed(down, { retryInMs: 5 })).toBe(true);
  advance(600);
  outage.answered();
  outage.answered(); // once over, nothing more to say
  expect(
    lines.map(({ level, msg, reason, cause, retryInMs, downMs, failedPasses, err }) => ({
      level,
      msg,
      reason,
      cause,
      retryInMs,
      downMs,
      failedPasses,
      err,
    })),
  ).toEqual([
    // The reason is the client's message; the cause is what the store said (the stack of neither).
    { level: 40, msg: 'store down', reason: down.message, cause: 'Command timed out' },
    { level: 20, msg: 'store still down', reason: down.message, cause: 'Command timed out', retryInMs: 5 },
    { level: 30, msg: 'store back', downMs: 1_000, failedPasses: 2 },
  ]);
});

test('any other failure is left to the caller, and a later outage is said afresh', () => {
  const { outage, lines } = outageOnClock();
  expect(outage.failed(new Error('a bug'))).toBe(false);
  expect(outage.failed(new MailboxError('INTERNAL', 'Internal error', 'a bug'))).toBe(false);
  outage.answered(); // no outage was said: no line
  expect(lines).toEqual([]);
  outage.failed(unavailable('Redis'));
  outage.answered();
  outage.failed(unavailable('Redis'));
  expect(lines.map((line) => line.msg)).toEqual(['store down', 'store back', 'store down']);
});

test('a loop that stops asking during an outage (its lease stepped down) ends it with its own line: what it saw, not since when', () => {
  const { outage, lines, advance } = outageOnClock();
  outage.stoppedAsking(); // no outage: no line
  outage.failed(unavailable('Redis'));
  advance(1_000);
  outage.failed(unavailable('Redis'));
  advance(1_000);
  outage.failed(unavailable('Redis'));
  advance(60_000); // not leading: nothing asked
  outage.stoppedAsking();
  advance(60_000);
  outage.answered(); // leading again, and answered: the outage it said is over already
  outage.failed(unavailable('Redis')); // a later outage is said afresh
  expect(
    lines.map(({ level, msg, failingForMs, failedPasses, downMs }) => ({ level, msg, failingForMs, failedPasses, downMs })),
  ).toEqual([
    { level: 40, msg: 'store down' },
    { level: 20, msg: 'store still down' },
    { level: 20, msg: 'store still down' },
    { level: 30, msg: 'stopped asking', failingForMs: 2_000, failedPasses: 3 },
    { level: 40, msg: 'store down' },
  ]);
});

test('a store that answers with a refusal only an operator mends is said in the refused lines, never as one that does not answer; a change of kind is said afresh', () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let now = 1_000;
  const refused = { down: 'store refuses', back: 'store takes them again', stoppedAsking: 'stopped asking (refused)' };
  const outage = new StoreOutage(logger, () => now, { ...LINES, refused });
  const refusal = operatorNeeded('The store refused the user', 'give the user the right');
  outage.failed(refusal);
  now += 100;
  outage.failed(refusal);
  now += 100;
  outage.answered();
  outage.failed(refusal);
  outage.failed(unavailable('Redis')); // then it no longer answers: said as that
  outage.failed(refusal); // and answers, refusing, again
  outage.stoppedAsking();
  expect(
    lines.map(({ level, msg, operatorAction, refusedForMs, downMs }) => ({ level, msg, operatorAction, refusedForMs, downMs })),
  ).toEqual([
    { level: 40, msg: 'store refuses; an operator must act: give the user the right', operatorAction: 'give the user the right' },
    { level: 20, msg: 'store refuses' },
    { level: 30, msg: 'store takes them again', refusedForMs: 200 },
    { level: 40, msg: 'store refuses; an operator must act: give the user the right', operatorAction: 'give the user the right' },
    { level: 40, msg: 'store down' },
    { level: 40, msg: 'store refuses; an operator must act: give the user the right', operatorAction: 'give the user the right' },
    { level: 30, msg: 'stopped asking (refused)' },
  ]);
});
