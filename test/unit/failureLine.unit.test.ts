/**
 * The one line `mailbox audit | projections | backup` print for a failure without --json: nothing the envelope tells a
 * person is lost (the remedy, where a replay that stopped goes on, where the log ends), and it stays one line.
 */
import { MailboxError, operatorNeeded } from '../../src/errors';
import { reportCommandFailure } from '../../src/cli/commands/commandConfig';

function said(caught: unknown, json = false): { text: string; code: 1 | 2 } {
  let text = '';
  const code = reportCommandFailure(caught, { stderr: { write: (chunk: string) => (text += chunk) }, json }, 'Audit failed');
  return { text, code };
}

test('a refusal only an operator mends ends with its remedy; --json prints the envelope as it is', () => {
  const error = operatorNeeded('The views in Redis are of another log.', 'run `mailbox projections rebuild --take-over`');
  expect(said(error)).toEqual({
    text: 'mailbox: The views in Redis are of another log. run `mailbox projections rebuild --take-over`\n',
    code: 2,
  });
  expect(said(error, true)).toEqual({ text: `${JSON.stringify(error.envelope)}\n`, code: 2 });
});

test('a remedy the message already holds is not said twice', () => {
  const error = operatorNeeded('Restart the server: it moves the file aside.', 'Restart the server');
  expect(said(error).text).toBe('mailbox: Restart the server: it moves the file aside.\n');
});

test('a remedy whose command the message already names is not repeated after it (only its explaining parenthesis differs)', () => {
  const error = operatorNeeded(
    'The views are ahead of this log: take them over with `mailbox projections rebuild --take-over`.',
    'mailbox projections rebuild --take-over (rebuilds the views from this log)',
  );
  expect(said(error).text).toBe(
    'mailbox: The views are ahead of this log: take them over with `mailbox projections rebuild --take-over`.\n',
  );
});

test('resumeFrom and head the message does not name are said; a not-found exits 1', () => {
  const cut = new MailboxError('UNAVAILABLE', 'Mailbox unreachable', 'The server went away.', { resumeFrom: '8001' });
  expect(said(cut).text).toBe('mailbox: The server went away. Go on with --from 8001.\n');
  const past = new MailboxError('NOT_FOUND', 'Past the log head', 'No event there yet.', { head: '42' });
  expect(said(past)).toEqual({ text: 'mailbox: No event there yet. The log ends at position 42.\n', code: 1 });
  const told = new MailboxError('NOT_FOUND', 'Past the log head', 'Give --from 42 or lower.', { head: '42', resumeFrom: '42' });
  expect(said(told).text).toBe('mailbox: Give --from 42 or lower.\n');
});

test('a bug of the mailbox is said under the command, its code at the end, on one line', () => {
  expect(said(new Error('boom\n  at somewhere'))).toEqual({
    text: 'mailbox: audit failed: boom at somewhere (INTERNAL)\n',
    code: 2,
  });
});
