/**
 * What a field was given and what it takes, in words, for zod's issues that carry no message of their own: zod's
 * defaults ("Invalid input: expected string, received undefined", "Too small: expected string to have >=1
 * characters") describe its checks, not the input a caller should send. A schema's own message always wins (zod
 * asks this only when the schema gave none); the caller's error prefixes the field ("'body' is required: text").
 */
import type { z } from 'zod';
import { ISO_TIME_FORM, notTheTime } from './isoTime';
import { shownValue } from './shownValue';

/** How a JSON value is named in a message: "a number", "an array", "null"... */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'text';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

/**
 * The value a caller sent, named with its kind and cut (shownValue): `text "true"`, `the number 7`, `an array [1,2]`,
 * `true`, `null`. "must be true or false, not text" did not show which text: a model that wrote `"true"` for `true`
 * did not see its quotes.
 */
export function receivedOf(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return `the number ${shownValue(value)}`;
  if (typeof value === 'string' || Array.isArray(value) || typeof value === 'object') {
    return `${kindOf(value)} ${shownValue(value)}`;
  }
  return kindOf(value);
}

/** The JSON value text stands for when the field wants that kind: "true" for a boolean, "3" for a number; or null. */
function unquotedMeant(expected: string, input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const text = input.trim().toLowerCase();
  if (expected === 'boolean' && (text === 'true' || text === 'false')) return text;
  if ((expected === 'number' || expected === 'int') && /^-?\d+(\.\d+)?$/.test(text)) return String(Number(text));
  return null;
}

const EXPECTED: Record<string, string> = {
  string: 'text (a JSON string)',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list (a JSON array)',
  object: 'an object (a JSON object of fields)',
  // z.record: zod names it "record", which is no JSON type ('data' must be record, not an array).
  record: 'an object (a JSON object of keys and values)',
};

const expectedOf = (expected: string): string => EXPECTED[expected] ?? expected;

/** Words callers use for the mailbox's enum values: suggested only where the value is one of those allowed. */
/** The inbox listing's statuses (list_messages' `status`), which a caller may give as its `box`. */
const LISTING_STATUSES = ['unread', 'read', 'all', 'archived'];

const SYNONYMS: Record<string, string> = {
  sent: 'outbox',
  outgoing: 'outbox',
  received: 'inbox',
  incoming: 'inbox',
  new: 'unread',
  unseen: 'unread',
  seen: 'read',
  archive: 'archived',
  any: 'all',
  urgent: 'high',
  critical: 'high',
  important: 'high',
  medium: 'normal',
  default: 'normal',
  minor: 'low',
  mine: 'assigned',
  open: 'claimable',
  available: 'claimable',
  outbox: 'sent',
};

/** The value of the mailbox's sets that a word callers use for one stands for ('urgent': high), or undefined. */
export const synonymOf = (word: string): string | undefined =>
  Object.prototype.hasOwnProperty.call(SYNONYMS, word.toLowerCase()) ? SYNONYMS[word.toLowerCase()] : undefined;

/** An MCP text content block: {"type": "text", "text": "..."} (and nothing else but its annotations). */
const isTextBlock = (value: unknown): value is { type: 'text'; text: string } =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  (value as { type?: unknown }).type === 'text' &&
  typeof (value as { text?: unknown }).text === 'string' &&
  Object.keys(value).every((key) => ['type', 'text', 'annotations', '_meta'].includes(key));

/**
 * The text that MCP content blocks given for a text field hold (a model writes a body as a tool result's `content`:
 * [{"type": "text", "text": "hi"}]), or null when the value is no such block nor a list of them: told the text to give,
 * never taken in its place.
 */
function contentBlocksText(input: unknown): string | null {
  if (isTextBlock(input)) return input.text;
  if (Array.isArray(input) && input.length > 0 && input.every(isTextBlock)) return input.map((block) => block.text).join('\n');
  return null;
}

/** zod's per-parse error map: a teaching message for the common issues, undefined (zod's own) for the rest. */
export function teachingMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = expectedOf(String(issue.expected));
      if (issue.input === undefined) return `is required: ${expected}`;
      // A coerced field (query strings, flags) has lost what was typed by now: NaN says only that it was no number.
      if (Number.isNaN(issue.input)) return `must be ${expected}`;
      // The value itself, and the JSON value its text stands for ("true" for true): suggested, never taken.
      const meant = unquotedMeant(String(issue.expected), issue.input);
      const blocks = issue.expected === 'string' ? contentBlocksText(issue.input) : null;
      if (blocks !== null)
        return `must be ${expected}, not ${receivedOf(issue.input)}: give the text itself, ${shownValue(blocks)}, not MCP content blocks ({"type": "text", "text": ...})`;
      return `must be ${expected}, not ${receivedOf(issue.input)}${meant === null ? '' : `: did you mean ${meant}, unquoted?`}`;
    }
    case 'too_small': {
      const minimum = Number(issue.minimum);
      const { input } = issue as { input?: unknown };
      const has = lengthSaid(input);
      if (issue.origin === 'string')
        return minimum <= 1 ? 'must not be empty' : `must be at least ${minimum} characters long${has}`;
      if (issue.origin === 'array') return `must hold at least ${minimum} item${minimum === 1 ? '' : 's'}${has}`;
      if (issue.origin === 'number')
        return `${issue.inclusive === false ? `must be more than ${minimum}` : `must be at least ${minimum}`}${notNumber(input)}`;
      return undefined;
    }
    case 'too_big': {
      const maximum = Number(issue.maximum);
      // How long it was: a caller cutting it down knows by how much ("subject ... at most 200 characters long (it has 243)").
      const { input } = issue as { input?: unknown };
      const has = lengthSaid(input);
      if (issue.origin === 'string') return `must be at most ${maximum} characters long${has}`;
      if (issue.origin === 'array') return `must hold at most ${maximum} items${has}`;
      if (issue.origin === 'number')
        return `${issue.inclusive === false ? `must be less than ${maximum}` : `must be at most ${maximum}`}${notNumber(input)}`;
      return undefined;
    }
    case 'invalid_value': {
      const valid = `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
      // "High" for "high", "Outbox" for "outbox": the value meant, in another case. Named, never taken in its place.
      const { input } = issue as { input?: unknown };
      const meant =
        typeof input === 'string'
          ? issue.values.find(
              (value) => typeof value === 'string' && value !== input && value.toLowerCase() === input.toLowerCase(),
            )
          : undefined;
      if (meant !== undefined)
        return `${valid}, not ${JSON.stringify(input)}: did you mean ${JSON.stringify(meant)}? (written exactly so)`;
      // The value refused, named ("urgent", "sent"), with the value a common other word for it means.
      if (input === undefined) return valid;
      if (typeof input !== 'string' && typeof input !== 'number') return `${valid}, not ${receivedOf(input)}`;
      // box=archived (or unread, read, all): a listing's status given as its box, told "must be one of inbox, outbox" only.
      if (typeof input === 'string' && LISTING_STATUSES.includes(input) && issue.values.join() === 'inbox,outbox')
        return `${valid}, not ${shownValue(input)}: "${input}" is a status of the inbox, not a box: give status "${input}" (the box is inbox by default)`;
      const synonym = typeof input === 'string' ? SYNONYMS[input.toLowerCase()] : undefined;
      const near = synonym !== undefined && issue.values.includes(synonym) ? `: did you mean ${JSON.stringify(synonym)}?` : '';
      return `${valid}, not ${shownValue(input)}${near}`;
    }
    case 'invalid_format':
      // zod's "Invalid ISO datetime" does not say which ISO form: the date alone, minutes without seconds and an offset
      // written +hhmm are all ISO 8601, and all refused.
      // The value refused is named as every other refusal names it, with the ISO time it nearly is (suggested, never taken).
      if (issue.format === 'datetime') return `must be ${ISO_TIME_FORM}${notTheTime((issue as { input?: unknown }).input)}`;
      // zod's "Invalid string: must match pattern /.../" named neither the value nor, for a reader, the form.
      return `must be ${formatOf(issue.format, issue.pattern)}${notThe(issue.input)}`;
    case 'invalid_union': {
      // zod's "Invalid input" (a union that teaches its forms gives its own message): the options, and the value.
      const { options } = issue as { options?: unknown[] };
      const valid = options?.length
        ? `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`
        : 'matches none of its forms';
      return `${valid}${notThe(issue.input)}`;
    }
    case 'invalid_key': {
      // zod's "Invalid key in record" did not say what a key must be ({"agents": {"b": {...}}}): the key's own message does.
      const said = issue.issues.map((inner) => inner.message).find((text) => typeof text === 'string' && text !== '');
      return said === undefined ? 'is not a valid key here' : `is not a valid key: the key ${said}`;
    }
    case 'unrecognized_keys':
      return NOT_A_FIELD_HERE;
    default:
      return undefined;
  }
}

/** Formats zod checks, as a caller reads them after "must be". */
const FORMATS: Record<string, string> = {
  uuid: 'a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86',
  guid: 'a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86',
  email: 'an email address',
  url: 'a URL',
};

const formatOf = (format: string, pattern: unknown): string =>
  format === 'regex' && pattern !== undefined
    ? `text matching ${pattern instanceof RegExp ? pattern.source : String(pattern)}`
    : (FORMATS[format] ?? `text in the ${format} format`);

const notThe = (input: unknown): string => (input === undefined ? '' : `, not ${receivedOf(input)}`);

/** ", not 0": a number refused by its bounds is named (a caller computing it sees what it sent). */
const notNumber = (input: unknown): string => (typeof input === 'number' ? `, not ${input}` : '');

/** What an unknown field's issue says unless its schema shows its form (the refusal names the fields allowed). */
export const NOT_A_FIELD_HERE = 'is not a field here';

/**
 * A schema's own error map: what the per-parse one says, then the form the value takes when the value has another
 * shape (`must be a list (a JSON array), not text: <form>`, `is required: ...`, `must hold at least 1 item: ...`); for an
 * unknown field, the form alone (the refusal adds it after the fields allowed).
 */
export const showingForm =
  (form: string) =>
  (issue: z.core.$ZodRawIssue): string | undefined => {
    if (issue.code === 'unrecognized_keys') return form;
    const said = teachingMessage(issue);
    const ofShape = issue.code === 'invalid_type' || issue.code === 'too_small'; // too many is told its size alone
    return said === undefined || !ofShape ? said : `${said}: ${form}`;
  };

/**
 * How long a text or a list over (or under) its limit is, as the limit counts it: zod counts a text's characters (code
 * points), and the message counted UTF-16 units, so 11 emoji over a limit of 10 were "(it has 22)", read as a miscount.
 */
function lengthSaid(input: unknown): string {
  if (typeof input === 'string') return ` (it has ${[...input].length})`;
  return Array.isArray(input) ? ` (it has ${input.length})` : '';
}
