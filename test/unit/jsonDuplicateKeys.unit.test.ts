/**
 * Given JSON text that JSON.parse accepts, when it is scanned for keys named twice in one object, then the path
 * to the first such key is found (or null), whatever the strings, escapes and nesting around it.
 */
import { assertNoDuplicateKeys, pathOfDuplicateKey } from '../../src/commands/jsonDuplicateKeys';
import { MailboxError } from '../../src/errors';

describe('pathOfDuplicateKey', () => {
  test.each([
    ['{}', null],
    ['[]', null],
    ['"text"', null],
    ['{"to":"@b","subject":"s","body":"b"}', null],
    ['{"a":{"x":1},"b":{"x":2}}', null], // one name in two objects is fine
    ['[{"x":1},{"x":2}]', null],
    ['{"a":"\\"a\\":1,","b":"{\\"a\\":2}"}', null], // quotes, braces and commas inside strings are text
    ['{"body":"b","body":"c"}', ['body']],
    [' { "body" : "b" , "body" : "c" } ', ['body']],
    ['{"body":"b","b\\u006fdy":"c"}', ['body']], // compared as JSON.parse reads them
    ['{"task":{"input":{"parts":[{"kind":"data","data":{"k":1,"k":2}}]}}}', ['task', 'input', 'parts', 0, 'data', 'k']],
    ['[1,[2,3],{"a":1},{"b":1,"b":2}]', [3, 'b']],
    ['{"a":[],"b":{},"c":{"d":[{"e":1}],"d":0}}', ['c', 'd']],
    ['{"say \\"hi\\"":1,"say \\"hi\\"":2}', ['say "hi"']],
    ['{"a":"ends in a backslash \\\\","b":"\\\\\\"","a":1}', ['a']], // \\ then an escaped quote: strings end where JSON says
    ['{"a":"\\\\","b":1}', null],
  ])('%s -> %j', (text, expected) => {
    JSON.parse(text); // the scanner is only ever given text JSON.parse accepted
    expect(pathOfDuplicateKey(text)).toEqual(expected);
  });
});

describe('assertNoDuplicateKeys', () => {
  test('names the key, where it is (after the prefix) and why it is refused', () => {
    const thrown = (() => {
      try {
        assertNoDuplicateKeys('{"input":{"x":1,"x":2}}', ['task']);
      } catch (error) {
        return error;
      }
    })() as MailboxError;
    expect(thrown).toBeInstanceOf(MailboxError);
    expect(thrown.code).toBe('VALIDATION_FAILED');
    expect(thrown.envelope).toMatchObject({ code: 'VALIDATION_FAILED', field: 'task.input.x' });
    expect(thrown.message).toContain("'task.input.x' appears twice in one JSON object; send the key 'x' once");
  });

  test('text without a repeated key passes', () => {
    expect(() => assertNoDuplicateKeys('{"x":1,"y":{"x":2}}')).not.toThrow();
  });
});
