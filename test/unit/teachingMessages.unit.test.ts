/** zod issues without a message of their own become messages that say what the field takes (teachingMessages.ts). */
import { z } from 'zod';
import { parseInput } from '../../src/commands/validation';
import { identitySchema, messageIdSchema } from '../../src/commands/schemas';
import { parseHeartbeatSettings } from '../../src/heartbeat/heartbeatSettings';
import { MailboxError } from '../../src/errors';

const schema = z.strictObject({
  name: z.string().min(1).max(10),
  count: z.number().int().min(2).max(9).optional(),
  ratio: z.number().positive().lt(1).optional(),
  every: z.coerce.number().optional(),
  items: z.array(z.string()).min(2).max(3).optional(),
  mode: z.enum(['fast', 'safe']).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  owner: identitySchema.optional(),
  code: z
    .string()
    .regex(/^[a-z]+$/)
    .optional(),
  either: z.union([z.string(), z.number()]).optional(),
  flag: z.boolean().optional(),
});

function messageFor(input: unknown): string {
  try {
    parseInput(schema, input, 'tool');
  } catch (error) {
    if (error instanceof MailboxError) return error.message;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
}

describe('teaching messages', () => {
  it.each([
    [{}, "tool: 'name' is required: text (a JSON string)"],
    [{ name: 7 }, "tool: 'name' must be text (a JSON string), not the number 7"],
    [{ name: null }, "tool: 'name' must be text (a JSON string), not null"],
    [{ name: '' }, "tool: 'name' must not be empty"],
    [{ name: 'x'.repeat(11) }, "tool: 'name' must be at most 10 characters long (it has 11)"],
    // Counted as the limit counts them (characters: code points), not in UTF-16 units, where an emoji is two ("it has 22").
    [{ name: 'é🚀'.repeat(6) }, "tool: 'name' must be at most 10 characters long (it has 12)"],
    [{ name: 'n', count: '3' }, 'tool: \'count\' must be a number, not text "3": did you mean 3, unquoted?'],
    [{ name: 'n', every: 'soon' }, "tool: 'every' must be a number"],
    [{ name: 'n', count: 1 }, "tool: 'count' must be at least 2, not 1"],
    [{ name: 'n', count: 10 }, "tool: 'count' must be at most 9, not 10"],
    [{ name: 'n', ratio: 0 }, "tool: 'ratio' must be more than 0, not 0"],
    [{ name: 'n', ratio: 1 }, "tool: 'ratio' must be less than 1, not 1"],
    [{ name: 'n', items: ['a'] }, "tool: 'items' must hold at least 2 items (it has 1)"],
    [{ name: 'n', items: ['a', 'b', 'c', 'd'] }, "tool: 'items' must hold at most 3 items (it has 4)"],
    [{ name: 'n', items: 'a,b' }, 'tool: \'items\' must be a list (a JSON array), not text "a,b"'],
    [{ name: 'n', mode: 'slow' }, 'tool: \'mode\' must be one of "fast", "safe", not "slow"'],
    [{ name: 'n', data: [1, 2] }, "tool: 'data' must be an object (a JSON object of keys and values), not an array [1,2]"],
    [{ name: 'n', data: 'x' }, 'tool: \'data\' must be an object (a JSON object of keys and values), not text "x"'],
    [[], 'tool: the input must be an object (a JSON object of fields), not an array []'],
    // Every refusal names the value received, cut, beside the valid form (zod's own wording named neither).
    [{ name: 'n', code: 'A1' }, 'tool: \'code\' must be text matching /^[a-z]+$/, not text "A1"'],
    [{ name: 'n', either: true }, "tool: 'either' matches none of its forms, not true"],
    [{ name: 'n', flag: 'True' }, 'tool: \'flag\' must be true or false, not text "True": did you mean true, unquoted?'],
    [{ name: 'n', flag: 'on' }, 'tool: \'flag\' must be true or false, not text "on"'],
    [
      { name: 'n', flag: { on: 'x'.repeat(99) } },
      `tool: 'flag' must be true or false, not an object {"on":"${'x'.repeat(50)}...`,
    ],
  ])('given %j, the message is %j', (input, message) => {
    expect(messageFor(input)).toBe(message);
  });

  it('a refused value is shown back cut to 60 characters, not whole (a body sent as a priority)', () => {
    expect(messageFor({ name: 'n', mode: 'x'.repeat(5000) })).toBe(
      `tool: 'mode' must be one of "fast", "safe", not "${'x'.repeat(56)}..."`,
    );
  });

  it("a schema's own message wins over the teaching default", () => {
    expect(messageFor({ name: 'n', owner: 'alice' })).toBe(
      'tool: \'owner\' must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt); "alice" is not one: did you mean "@alice"? (the @ is part of the identity)',
    );
  });

  it("a record's key says what a key must be (zod said 'Invalid key in record')", () => {
    let said = '';
    try {
      parseInput(z.strictObject({ agents: z.record(identitySchema, z.object({})) }), { agents: { b: {} } }, 'tool');
    } catch (error) {
      said = (error as MailboxError).message;
    }
    expect(said).toBe(
      'tool: \'agents.b\' is not a valid key: the key must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt); "b" is not one: did you mean "@b"? (the @ is part of the identity)',
    );
  });
});

describe("a field's own message reads as a sentence after the field's name", () => {
  // "'hook' a command path, ..." and "'from' an identity is @ ..." had no verb: each now says what the field must be.
  const said = (run: () => unknown): string => {
    try {
      run();
    } catch (error) {
      if (error instanceof MailboxError) return error.message;
      throw error;
    }
    throw new Error('expected a refusal');
  };
  it.each([
    [
      { webhookSecret: 'x'.repeat(16), agents: { '@b': { webhook: 'ftp://x' } } },
      "'agents.@b.webhook' must be an http:// or https:// URL",
    ],
    [{ hook: [] }, '\'hook\' must be a command path, or a JSON array ["command", "arg", ...]'],
    [{ webhookSecret: 'short' }, "'webhookSecret' must be at least 16 characters"],
    [{ redisUrl: 'http://x' }, "'redisUrl' must be a Redis URL, starting with redis:// or rediss://"],
    [
      { optOut: ['b'] },
      '\'optOut.0\' must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt); "b" is not one: did you mean "@b"? (the @ is part of the identity)',
    ],
  ])('heartbeat settings %j', (input, message) => {
    expect(said(() => parseHeartbeatSettings(input))).toBe(`heartbeat settings: ${message}`);
  });

  it.each([
    [
      { from: 'x' },
      '\'from\' must be an identity: @ followed by 1-64 of A-Z a-z 0-9 _ - (e.g. @neo-gpt); "x" is not one: did you mean "@x"? (the @ is part of the identity)',
    ],
    [
      { messageId: 'x' },
      "'messageId' must be a message id: a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86, as a send returns it and a " +
        "listing shows it (list_messages' messageId, list_tasks' taskId); 'x' is not one",
    ],
    [{ messageId: ['x'] }, '\'messageId\' must be one message id, a UUID string, as returned by a send; got an array ["x"]'],
  ])('%j', (input, message) => {
    const fields = z.strictObject({ from: identitySchema.optional(), messageId: messageIdSchema.optional() });
    expect(said(() => parseInput(fields, input, 'tool'))).toBe(`tool: ${message}`);
  });
});

describe('several wrong fields', () => {
  it('are all said in the message (up to three), each with its field; the envelope lists every one', () => {
    let caught: unknown;
    try {
      parseInput(schema, { name: '', count: 1, items: ['a'], mode: 'slow' }, 'tool');
    } catch (error) {
      caught = error;
    }
    const error = caught as MailboxError;
    expect(error.message).toBe(
      "tool: 'name' must not be empty; 'count' must be at least 2, not 1; 'items' must hold at least 2 items (it has 1); and 1 more (see issues)",
    );
    expect(error.envelope).toMatchObject({
      field: 'name',
      issues: [
        { field: 'name', message: 'must not be empty' },
        { field: 'count', message: 'must be at least 2, not 1' },
        { field: 'items', message: 'must hold at least 2 items (it has 1)' },
        { field: 'mode', message: 'must be one of "fast", "safe", not "slow"' },
      ],
    });
  });
});
