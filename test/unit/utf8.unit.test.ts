import { firstInvalidUtf8Offset, invalidByteAt } from '../../src/support/utf8';

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

test.each([
  ['UTF-8 text, multi-byte characters included', bytes('café 😀 ü'), -1],
  ['a U+FFFD sent as such (EF BF BD)', bytes('a\uFFFDb'), -1],
  ['Latin-1 é', bytes('caf', [0xe9]), 3],
  ['a U+FFFD sent as such before an invalid byte', bytes('\uFFFD\uFFFDé', [0xff]), 8],
  ['a sequence cut short at the end', bytes('ok', [0xf0, 0x9f, 0x98]), 2],
  ['an overlong encoding of /', bytes('x', [0xc0, 0xaf]), 1],
  ['a UTF-16 surrogate encoded as UTF-8 (CESU-8)', bytes('ab', [0xed, 0xa0, 0x80]), 2],
])('%s', (_name, input, offset) => {
  expect(firstInvalidUtf8Offset(input)).toBe(offset);
});

test('invalidByteAt names the byte in hex and its offset', () => {
  expect(invalidByteAt(bytes('caf', [0xe9]), 3)).toBe('byte 0xE9 at offset 3');
});
