/** The list query: a filter that does not apply to the chosen box is rejected, never ignored. */
import { APPLICABLE_FILTERS, decodeCursor, encodeCursor, parseListQuery } from '../../src/projections/listQuery';
import { MailboxError } from '../../src/errors';

function rejection(input: unknown): MailboxError {
  try {
    parseListQuery(input);
  } catch (error) {
    if (error instanceof MailboxError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe('parseListQuery', () => {
  it('defaults to the inbox, 50 per page', () => {
    expect(parseListQuery({})).toEqual({ box: 'inbox', limit: 50 });
    expect(parseListQuery(undefined)).toEqual({ box: 'inbox', limit: 50 });
  });

  it('status with box=outbox: FILTER_NOT_APPLICABLE listing the applicable filters', () => {
    const error = rejection({ box: 'outbox', status: 'unread' });
    expect(error.status).toBe(400);
    expect(error.envelope).toMatchObject({ code: 'FILTER_NOT_APPLICABLE', filter: 'status', box: 'outbox',
      applicable: [...APPLICABLE_FILTERS.outbox] });
    expect(error.message).toMatch(/status/);
    expect(error.message).toMatch(/box=outbox/);
  });

  it('from with box=outbox and to with box=inbox are not applicable either', () => {
    expect(rejection({ box: 'outbox', from: '@alice' }).envelope).toMatchObject({ code: 'FILTER_NOT_APPLICABLE', filter: 'from' });
    expect(rejection({ to: '@bob' }).envelope).toMatchObject({ code: 'FILTER_NOT_APPLICABLE', filter: 'to', box: 'inbox',
      applicable: [...APPLICABLE_FILTERS.inbox] });
  });

  it('a filter key whose value is undefined counts as not given (library callers spreading optional fields)', () => {
    expect(parseListQuery({ box: 'outbox', status: undefined, from: undefined })).toEqual({ box: 'outbox', limit: 50 });
    expect(rejection({ box: 'outbox', status: null }).code).toBe('VALIDATION_FAILED');
  });

  it('accepts every applicable filter', () => {
    expect(parseListQuery({ status: 'unread', from: '@alice', threadId: 't', tags: 'a,b', priority: 'high', limit: '10' }))
      .toEqual({ box: 'inbox', status: 'unread', from: '@alice', threadId: 't', tags: ['a', 'b'], priority: 'high', limit: 10 });
    expect(parseListQuery({ box: 'outbox', to: 'AGENT:*', tags: '["x"]' })).toEqual({ box: 'outbox', to: 'AGENT:*', tags: ['x'], limit: 50 });
  });

  it('an unknown key: UNKNOWN_FIELD with the allowed keys', () => {
    expect(rejection({ sort: 'asc' }).envelope).toMatchObject({ code: 'UNKNOWN_FIELD', field: 'sort',
      allowed: ['box', 'status', 'from', 'to', 'threadId', 'tags', 'priority', 'limit', 'cursor'] });
  });

  it.each([
    [{ status: 'new' }, 'status'], [{ box: 'sent' }, 'box'], [{ limit: 0 }, 'limit'], [{ limit: 201 }, 'limit'],
    [{ limit: 'ten' }, 'limit'], [{ from: 'alice' }, 'from'], [{ priority: 'urgent' }, 'priority'], [{ tags: '[oops' }, 'tags'],
  ])('%j: VALIDATION_FAILED on %s', (input, field) => {
    expect(rejection(input).envelope).toMatchObject({ code: 'VALIDATION_FAILED', field });
  });
});

describe('cursors', () => {
  it('round-trip a position and are opaque text', () => {
    const cursor = encodeCursor(123456789012345678n);
    expect(cursor).not.toContain('123456789012345678');
    expect(decodeCursor(cursor)).toBe(123456789012345678n);
    expect(decodeCursor(undefined)).toBeNull();
  });

  it('a cursor this server did not issue: VALIDATION_FAILED', () => {
    expect(() => decodeCursor('%%%not-a-cursor')).toThrow(MailboxError);
    try {
      decodeCursor(Buffer.from('abc').toString('base64url'));
    } catch (error) {
      expect((error as MailboxError).envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'cursor' });
      return;
    }
    throw new Error('expected a VALIDATION_FAILED');
  });
});
