/**
 * Every string of an accepted input is Unicode text: a lone UTF-16 surrogate (JSON's "\ud800" with no partner,
 * or such a JS string through the library) is refused. It is no character, and no store keeps it: the log kept
 * it as a JSON escape, but the SQLite views (and Redis) hold UTF-8, where it became three U+FFFD, so the inbox
 * listed "���" for the subject get_message returned as sent. The error names the field, the code unit and where
 * it is, and shows the surrogate pair form of a character beyond U+FFFF.
 */
import { MailboxError } from '../errors';
import { jsonField } from './jsonDepth';

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

export interface IllFormedText {
  path: Array<string | number>;
  /** The index (in UTF-16 code units) of the lone surrogate in the string. */
  index: number;
  codeUnit: number;
  /** True when the string is a key of an object, not a value. */
  isKey: boolean;
}

/**
 * String#isWellFormed (Node 20+; not in this project's ES2022 typings): a builtin, ~7x faster than the regex on
 * two-byte text (a 60,000-character body: 67 µs against 456), so the regex only runs to locate a surrogate.
 */
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** The first string (a value or a key) in `value` that holds a lone surrogate, or null. Iterative: safe at any depth. */
export function findIllFormedText(value: unknown): IllFormedText | null {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: node, path } = stack.pop()!;
    if (typeof node === 'string') {
      if (wellFormed(node)) continue;
      const match = LONE_SURROGATE.exec(node);
      if (match) return { path, index: match.index, codeUnit: match[0].charCodeAt(0), isKey: false };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const entries: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      const match = typeof key === 'string' && !wellFormed(key) ? LONE_SURROGATE.exec(key) : null;
      if (match) return { path: [...path, key], index: match.index, codeUnit: match[0].charCodeAt(0), isKey: true };
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}

const hex = (codeUnit: number) => `\\u${codeUnit.toString(16).toUpperCase().padStart(4, '0')}`;

/** Throws VALIDATION_FAILED when a string of `value` holds a lone surrogate; `what` names the command. */
export function assertWellFormedText(value: unknown, what: string): void {
  const found = findIllFormedText(value);
  if (found === null) return;
  // A key that holds the surrogate is named with it escaped: the error itself must be text that can be stored.
  const field = jsonField(found.path).replace(LONE_SURROGATES, (unit) => hex(unit.charCodeAt(0)));
  const where = found.isKey ? `the key '${field}'` : `'${field || '(root)'}'`;
  throw new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `${what}: ${where} holds a lone UTF-16 surrogate (${hex(found.codeUnit)} at index ${found.index}), which is not ` +
      'a Unicode character and cannot be stored as sent; send the character itself, or in JSON its surrogate pair ' +
      '(\\uD83D\\uDE00 for U+1F600), or remove it. Nothing was written.',
    { field, index: found.index },
  );
}
