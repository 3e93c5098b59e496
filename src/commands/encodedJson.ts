/**
 * Lossless-permissive (seed 003): a structured field also takes its JSON encoding, as an MCP client that serialises
 * nested arguments sends it. One rule for every such field (a task, message ids, artifacts, tags): the text is
 * decoded, held to the nesting limit and refused for a repeated key before anything validates what it decodes to.
 * Anything else is refused with the field's own form and example, never split or guessed.
 */
import { z } from 'zod';
import { assertJsonDepth } from './jsonDepth';
import { assertNoDuplicateKeys } from './jsonDuplicateKeys';
import { receivedOf } from './teachingMessages';
import { shownValue } from './shownValue';

const NOT_JSON = Symbol('not JSON');

/** `text` parsed as JSON, unchecked, or NOT_JSON. */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** A string opening as JSON's object or array does (found: '{"state":"Submitted"', its brace missing, was called plain). */
const looksLikeJson = (text: string): boolean => /^\s*[[{]/.test(text);

/** Why `text` is no JSON, in the parser's words (with its position), and whether the text ended before the JSON did. */
function whyNotJson(text: string): string {
  try {
    JSON.parse(text);
    return 'it parses';
  } catch (error) {
    // Node 22's parser adds ' (line 1 column 21)' after the position Node 20 gives alone: one wording on both.
    const said = (error instanceof Error ? error.message : String(error)).replace(/ \(line \d+ column \d+\)/, '');
    const at = /position (\d+)/.exec(said);
    // "Unexpected end of JSON input" names no position: it is the text's end.
    const position = at ? Number(at[1]) : /end of JSON input/.test(said) ? text.length : null;
    const shown = at || position === null ? said : `${said} at position ${position}`;
    return position !== null && position >= text.length
      ? `${shown}, where the text ends (a closing bracket or brace missing?)`
      : shown;
  }
}

/** Whether parsedJson or decodedJson read JSON. */
export const isJson = (decoded: unknown): boolean => decoded !== NOT_JSON;

/** What `text` decodes to, held to the nesting limit and refused for a repeated key, before anything validates it. */
function checked(text: string, decoded: unknown, field: string): unknown {
  assertJsonDepth(decoded, [field]);
  assertNoDuplicateKeys(text, [field]);
  return decoded;
}

/** `text` decoded and checked (errors named by `field`), or NOT_JSON when it is no JSON at all (isJson). */
export const decodedJson = (text: string, field: string): unknown => {
  const decoded = parsedJson(text);
  return isJson(decoded) ? checked(text, decoded, field) : decoded;
};

export interface EncodedForm {
  kind: 'array' | 'object';
  /** What the field takes, after "must be": "an array of message ids". */
  what: string;
  example: string;
  /** The plain string is one item of the array (one message id): what to send for it, said after the refusal. */
  oneItem?: { fits(text: string): boolean; say(text: string): string };
}

/**
 * `schema`, or the same value JSON-encoded as one string. A string that is not the JSON of an array (or object, as
 * `form.kind` says) is refused with the form: "must be an array of message ids, e.g. [...], or that array JSON-encoded
 * as one string; the plain string "abc" is not one".
 */
export function encodedOr<T extends z.ZodType>(field: string, schema: T, form: EncodedForm) {
  const fits = (decoded: unknown) =>
    form.kind === 'array' ? Array.isArray(decoded) : typeof decoded === 'object' && decoded !== null && !Array.isArray(decoded);
  return z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    // Only the JSON of the field's kind is decoded: a string of another JSON kind is told what it holds.
    const decoded = parsedJson(value);
    if (fits(decoded)) return checked(value, decoded, field);
    const split = form.kind === 'array' && value.includes(',') ? ' (comma-separated text is not split)' : '';
    const said = isJson(decoded)
      ? `the string decodes to ${receivedOf(decoded)}`
      : looksLikeJson(value)
        ? `the string ${shownValue(value)} looks like JSON but does not parse: ${whyNotJson(value)}`
        : `the plain string ${shownValue(value)} is not one${split}${form.oneItem?.fits(value) ? `: ${form.oneItem.say(value)}` : ''}`;
    ctx.addIssue({
      code: 'custom',
      message: `must be ${form.what}, e.g. ${form.example}, or that ${form.kind} JSON-encoded as one string; ${said}.`,
    });
    return z.NEVER;
  }, schema);
}
