/**
 * Validation at the edge: unknown keys name the field and list the allowed
 * ones; identity never comes from the body; every other failure says which
 * field and why.
 */
import { z } from 'zod';
import { oneMessageSchema, markReadSchema, registerAgentSchema, sendMessageSchema } from '../../src/commands/schemas';
import { allowedKeysAt, parseInput } from '../../src/commands/validation';
import { MailboxError } from '../../src/errors';

const SEND_FIELDS = [
  'to',
  'subject',
  'body',
  'priority',
  'inReplyTo',
  'threadId',
  'tags',
  'wakeSuppressed',
  'expectsReplyBy',
  'task',
  'idempotencyKey',
];
const valid = { to: '@bob', subject: 'hi', body: 'hello' };

function rejection(schema: Parameters<typeof parseInput>[0], input: unknown): MailboxError {
  try {
    parseInput(schema, input, 'add_message');
  } catch (error) {
    if (error instanceof MailboxError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe('SendMessage input', () => {
  it('fills the documented defaults', () => {
    expect(parseInput(sendMessageSchema, valid, 'add_message')).toEqual({
      ...valid,
      priority: 'normal',
      tags: [],
      wakeSuppressed: false,
    });
  });

  it.each(['from', 'sender', 'sentBy'])('rejects %j: the identity comes from the token, never the body', (field) => {
    const error = rejection(sendMessageSchema, { ...valid, [field]: '@mallory' });
    expect(error.status).toBe(400);
    expect(error.envelope).toMatchObject({ code: 'UNKNOWN_FIELD', field, fields: [field] });
    expect(error.envelope.allowed).toEqual(SEND_FIELDS);
    expect(error.message).toContain(`'${field}'`);
    expect(error.message).toMatch(/token/);
  });

  it('names every unknown key at once', () => {
    const error = rejection(sendMessageSchema, { ...valid, colour: 'red', cc: ['@carol'] });
    expect(error.envelope).toMatchObject({ code: 'UNKNOWN_FIELD', fields: ['colour', 'cc'] });
  });

  it.each([
    [{ subject: 'hi', body: 'x' }, 'to'],
    [{ to: '@bob', body: 'x' }, 'subject'],
    [{ to: '@bob', subject: 'hi' }, 'body'],
    [{ ...valid, subject: 's'.repeat(201) }, 'subject'],
    [{ ...valid, subject: '' }, 'subject'],
    [{ ...valid, priority: 'urgent' }, 'priority'],
    [{ ...valid, inReplyTo: 'not-a-uuid' }, 'inReplyTo'],
    [{ ...valid, wakeSuppressed: 'yes' }, 'wakeSuppressed'],
    [{ ...valid, tags: [''] }, 'tags.0'],
    [{ ...valid, tags: '[not json' }, 'tags'],
  ])('VALIDATION_FAILED names the field: %j -> %s', (input, field) => {
    const error = rejection(sendMessageSchema, input);
    expect(error.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field });
    expect(error.message).toContain(field);
  });

  it('accepts tags as an array or as a JSON-encoded array', () => {
    expect(parseInput(sendMessageSchema, { ...valid, tags: '["a","b"]' }, 'x').tags).toEqual(['a', 'b']);
    expect(parseInput(sendMessageSchema, { ...valid, tags: ['a', 'b'] }, 'x').tags).toEqual(['a', 'b']);
  });

  it('a body that is not an object at all is VALIDATION_FAILED, not a crash', () => {
    expect(rejection(sendMessageSchema, null).code).toBe('VALIDATION_FAILED');
    expect(rejection(sendMessageSchema, 'to=@bob').code).toBe('VALIDATION_FAILED');
  });
});

describe('MarkRead input', () => {
  const id = '0a8d3f4e-1111-4c1e-9a55-000000000001';
  const id2 = '0a8d3f4e-1111-4c1e-9a55-000000000002';

  it('one id, an array of ids, or the JSON encoding of that array', () => {
    expect(parseInput(markReadSchema, { messageId: id }, 'mark_read')).toEqual({ messageId: id });
    expect(parseInput(markReadSchema, { messageIds: [id, id2] }, 'mark_read')).toEqual({ messageIds: [id, id2] });
    expect(parseInput(markReadSchema, { messageIds: JSON.stringify([id, id2]) }, 'mark_read')).toEqual({ messageIds: [id, id2] });
  });

  it('neither or both: VALIDATION_FAILED naming a field (messageId when none was given, else the one too many)', () => {
    expect(rejection(markReadSchema, {}).envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'messageId' });
    expect(rejection(markReadSchema, { messageId: id, messageIds: [id2] }).envelope).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'messageIds',
    });
  });

  it('unknown keys: UNKNOWN_FIELD with the allowed ones', () => {
    expect(rejection(markReadSchema, { messageId: id, reader: '@bob' }).envelope).toMatchObject({
      code: 'UNKNOWN_FIELD',
      field: 'reader',
      allowed: ['messageId', 'messageIds', 'all', 'threadId', 'from', 'priority', 'before', 'includeUnseen'],
    });
  });

  it('ids that are not UUIDs: VALIDATION_FAILED naming the position', () => {
    expect(rejection(markReadSchema, { messageIds: [id, 'nope'] }).envelope).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'messageIds.1',
    });
  });
});

describe('RegisterAgent input', () => {
  it('defaults the role to agent; auditors allowed; admin is not a registrable role', () => {
    expect(parseInput(registerAgentSchema, { identity: '@neo-gpt' }, 'r')).toEqual({ identity: '@neo-gpt', role: 'agent' });
    expect(parseInput(registerAgentSchema, { identity: '@audit', role: 'auditor' }, 'r').role).toBe('auditor');
    expect(rejection(registerAgentSchema, { identity: '@root', role: 'admin' }).envelope).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'role',
    });
  });

  it.each(['neo-gpt', '@', '@a b', `@${'x'.repeat(65)}`, 'AGENT:*'])('identity %j has the wrong shape', (identity) => {
    expect(rejection(registerAgentSchema, { identity }).envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'identity' });
  });
});

describe('allowedKeysAt', () => {
  it('finds the keys of nested objects through optional, JSON-string and array wrappers', () => {
    expect(allowedKeysAt(sendMessageSchema, [])).toEqual(SEND_FIELDS);
    expect(allowedKeysAt(sendMessageSchema, ['task'])).toEqual([
      'state',
      'input',
      'metadata',
      'expectedOutput',
      'budget',
      'expiresAt',
    ]);
    expect(allowedKeysAt(sendMessageSchema, ['task', 'budget'])).toEqual(['deadline', 'maxTokens']);
    expect(allowedKeysAt(sendMessageSchema, ['task', 'input', 'parts', 0]).sort()).toEqual(['data', 'file', 'kind', 'text']);
  });

  it("narrows a union's forms to the one the object there selects by its literal fields", () => {
    const part = ['task', 'input', 'parts', 0];
    expect(allowedKeysAt(sendMessageSchema, part, { kind: 'data', text: 'x' })).toEqual(['kind', 'data']);
    expect(allowedKeysAt(sendMessageSchema, part, { kind: 'file', data: {} })).toEqual(['kind', 'file']);
    // No kind, or one no form takes: every form's fields, as before.
    expect(allowedKeysAt(sendMessageSchema, part, { text: 'x', type: 'text' }).sort()).toEqual(['data', 'file', 'kind', 'text']);
    expect(allowedKeysAt(sendMessageSchema, part, { kind: 'image' }).sort()).toEqual(['data', 'file', 'kind', 'text']);
  });
});

describe('unknown-field messages (issue 11)', () => {
  it('a schema that takes no fields says so, never "allowed fields: ."', () => {
    const error = rejection(z.strictObject({}), { identity: '@b' });
    expect(error.message).toBe("add_message does not accept 'identity'; it takes no fields.");
    expect(error.message).not.toContain('token');
  });

  it('the token sentence only for a sender field, and only at the top level', () => {
    expect(rejection(sendMessageSchema, { ...valid, colour: 'red' }).message).not.toMatch(/identity|token/);
    expect(rejection(sendMessageSchema, { ...valid, task: { from: '@x' } }).message).not.toMatch(/token/);
    expect(rejection(sendMessageSchema, { ...valid, sentBy: '@x' }).message).toMatch(/Your identity comes from your token/);
  });

  it('nested unknown keys name their place and the allowed keys there', () => {
    expect(rejection(sendMessageSchema, { ...valid, task: { budget: { tokens: 5 } } }).message).toBe(
      "add_message does not accept 'task.budget.tokens'; allowed fields in 'task.budget': deadline, maxTokens.",
    );
  });
});

describe('message ids are case-insensitive (normalised to lower case at the edge)', () => {
  const id = '0a8d3f4e-1111-4c1e-9a55-00000000000a';
  it.each([markReadSchema, oneMessageSchema])('%#: an upper-case id parses to the lower-case id', (schema) => {
    expect(parseInput(schema, { messageId: id.toUpperCase() }, 'x')).toMatchObject({ messageId: id });
  });
  it('inside messageIds and inReplyTo too', () => {
    expect(parseInput(markReadSchema, { messageIds: [id.toUpperCase()] }, 'x').messageIds).toEqual([id]);
    expect(parseInput(sendMessageSchema, { ...valid, inReplyTo: id.toUpperCase() }, 'x').inReplyTo).toBe(id);
  });
});
