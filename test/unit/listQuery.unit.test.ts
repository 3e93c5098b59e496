import { createHmac } from 'node:crypto';
/** The list query: a filter that does not apply to the chosen box is rejected, never ignored. */
import { APPLICABLE_FILTERS, listingOf, parseListQuery } from '../../src/application/listQueryParser';
import { CursorCodec, type CursorBinding } from '../../src/application/cursorCodec';
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
    expect(error.envelope).toMatchObject({
      code: 'FILTER_NOT_APPLICABLE',
      filter: 'status',
      box: 'outbox',
      applicable: [...APPLICABLE_FILTERS.outbox],
    });
    expect(error.message).toMatch(/status/);
    expect(error.message).toMatch(/box=outbox/);
  });

  it('from with box=outbox and to with box=inbox are not applicable either', () => {
    expect(rejection({ box: 'outbox', from: '@alice' }).envelope).toMatchObject({
      code: 'FILTER_NOT_APPLICABLE',
      filter: 'from',
    });
    expect(rejection({ to: '@bob' }).envelope).toMatchObject({
      code: 'FILTER_NOT_APPLICABLE',
      filter: 'to',
      box: 'inbox',
      applicable: [...APPLICABLE_FILTERS.inbox],
    });
  });

  it('a filter key whose value is undefined counts as not given (library callers spreading optional fields)', () => {
    expect(parseListQuery({ box: 'outbox', status: undefined, from: undefined })).toEqual({ box: 'outbox', limit: 50 });
    expect(rejection({ box: 'outbox', status: null }).code).toBe('VALIDATION_FAILED');
  });

  it('accepts every applicable filter', () => {
    expect(
      parseListQuery({ status: 'unread', from: '@alice', threadId: 't', tags: 'a,b', priority: 'high', limit: '10' }),
    ).toEqual({ box: 'inbox', status: 'unread', from: '@alice', threadId: 't', tags: ['a', 'b'], priority: 'high', limit: 10 });
    expect(parseListQuery({ box: 'outbox', to: 'AGENT:*', tags: '["x"]' })).toEqual({
      box: 'outbox',
      to: 'AGENT:*',
      tags: ['x'],
      limit: 50,
    });
  });

  it('an unknown key: UNKNOWN_FIELD with the allowed keys', () => {
    expect(rejection({ sort: 'asc' }).envelope).toMatchObject({
      code: 'UNKNOWN_FIELD',
      field: 'sort',
      allowed: ['box', 'status', 'from', 'to', 'threadId', 'tags', 'priority', 'limit', 'cursor'],
    });
  });

  it.each([
    [{ status: 'new' }, 'status'],
    [{ box: 'sent' }, 'box'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 201 }, 'limit'],
    [{ limit: 'ten' }, 'limit'],
    [{ from: 'alice' }, 'from'],
    [{ priority: 'urgent' }, 'priority'],
    [{ tags: '[oops' }, 'tags'],
  ])('%j: VALIDATION_FAILED on %s', (input, field) => {
    expect(rejection(input).envelope).toMatchObject({ code: 'VALIDATION_FAILED', field });
  });

  it.each([[1.5], [0], ['201'], ['0']])(
    'limit %j: the message says the valid range and the default, not what zod made of the text',
    (limit) => {
      const error = rejection({ limit });
      expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'limit' });
      expect(error.message).toBe(`list_messages: 'limit' takes a whole number from 1 to 200 (default 50), not ${Number(limit)}`);
    },
  );

  // Number() read '0x2' as 2, '1e1' as 10 and '' as 0: text is read in plain decimal digits only.
  it.each([['abc'], ['1.5'], [''], ['0x2'], ['1e1'], [' 2'], ['+2']])(
    'limit %j: text that is not plain decimal is refused with the range, the default and the form',
    (limit) => {
      const error = rejection({ limit });
      expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'limit' });
      expect(error.message).toBe(
        `list_messages: 'limit' takes a whole number from 1 to 200 (default 50), written in plain decimal digits, not '${limit}'`,
      );
    },
  );

  it.each([
    ['2', 2],
    [2, 2],
    ['200', 200],
  ])('limit %j is read as %d', (limit, read) => {
    expect(parseListQuery({ limit }).limit).toBe(read);
  });
});

describe('cursors bound to their listing', () => {
  const TOKEN = 'admin-token-0123456789abcdef';
  const codec = CursorCodec.fromAdminToken(TOKEN);
  const bound = (caller: string, input: Record<string, unknown>): CursorBinding => ({
    caller,
    kind: 'messages',
    listing: listingOf(parseListQuery(input)),
  });
  const inboxOfA = bound('@a', { status: 'unread', tags: 'ops,db' });

  function mismatch(binding: CursorBinding, cursor: string, with_ = codec): MailboxError {
    try {
      with_.decode(binding, cursor);
    } catch (error) {
      expect(error).toBeInstanceOf(MailboxError);
      return error as MailboxError;
    }
    throw new Error('expected CURSOR_MISMATCH');
  }

  it('round-trip a position for the same caller and listing, on any node that shares the admin token, whatever the limit', () => {
    const cursor = codec.encode(inboxOfA, 123456789012345678n);
    expect(cursor).not.toContain('123456789012345678');
    expect(codec.decode(inboxOfA, cursor)).toBe(123456789012345678n);
    expect(
      CursorCodec.fromAdminToken(TOKEN).decode(bound('@a', { status: 'unread', tags: ['db', 'ops'], limit: 7 }), cursor),
    ).toBe(123456789012345678n);
  });

  it.each([
    ['another box', bound('@a', { box: 'outbox' })],
    ['other filters', bound('@a', { status: 'unread', tags: 'ops' })],
    ['no filters', bound('@a', {})],
    ['another caller', bound('@b', { status: 'unread', tags: 'ops,db' })],
  ])('used with %s: CURSOR_MISMATCH telling to start again without a cursor', (_what, other) => {
    const error = mismatch(other, codec.encode(inboxOfA, 42n));
    expect(error.status).toBe(400);
    expect(error.envelope).toMatchObject({ code: 'CURSOR_MISMATCH', field: 'cursor' });
    expect(error.message).toMatch(/start again without a cursor/);
  });

  it('a cursor issued before cursors said their listing (format 1) still pages the listing that issued it, and no other', () => {
    const body = Buffer.alloc(9);
    body.writeUInt8(1, 0);
    body.writeBigUInt64BE(42n, 1);
    const key = createHmac('sha256', TOKEN).update('agent-mailbox cursor key v1').digest();
    const mac = createHmac('sha256', key)
      .update(body)
      .update(JSON.stringify([inboxOfA.caller, ...inboxOfA.listing]))
      .digest();
    const issuedBefore = Buffer.concat([body, mac]).toString('base64url');
    expect(codec.decode(inboxOfA, issuedBefore)).toBe(42n);
    expect(mismatch(bound('@a', { box: 'outbox' }), issuedBefore).message).toMatch(
      /^This cursor came from another message listing .* or was altered, and was used on this one/,
    );
  });

  it("any flipped character, a truncated or padded cursor, or another deployment's key: CURSOR_MISMATCH", () => {
    const cursor = codec.encode(inboxOfA, 42n);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < cursor.length; i++) {
      const flipped = alphabet[(alphabet.indexOf(cursor[i]) + 1) % alphabet.length];
      expect(mismatch(inboxOfA, cursor.slice(0, i) + flipped + cursor.slice(i + 1)).code).toBe('CURSOR_MISMATCH');
    }
    for (const bad of [
      cursor.slice(0, -1),
      `${cursor}A`,
      `${cursor}=`,
      '',
      '%%%not-a-cursor',
      Buffer.from('42').toString('base64url'),
    ]) {
      expect(mismatch(inboxOfA, bad).code).toBe('CURSOR_MISMATCH');
    }
    expect(mismatch(inboxOfA, cursor, CursorCodec.fromAdminToken('another-admin-token-0123456')).code).toBe('CURSOR_MISMATCH');
  });
});
