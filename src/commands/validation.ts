/**
 * Validate only at the edge: a failed zod parse becomes the error envelope and
 * nothing reaches a decider. Unknown keys are named with the allowed ones, so
 * the caller learns the valid form from the error itself.
 */
import type { z } from 'zod';
import { MailboxError } from '../errors';
import { fieldsMeant, moreRecipientsHint, partsHint, positionHint, unwrapHint, wrapperOf } from './fieldSuggestions';
import { assertJsonDepth } from './jsonDepth';
import { NOT_A_FIELD_HERE, teachingMessage } from './teachingMessages';
import { assertWellFormedText } from './wellFormedText';

type AnyDef = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  out?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
};

const defOf = (schema: z.ZodType): AnyDef => (schema as unknown as { _zod: { def: AnyDef } })._zod.def;

/** The object schemas reachable at `path` (several when a union is on the way). */
function objectsAt(schema: z.ZodType, path: readonly PropertyKey[]): Array<Record<string, z.ZodType>> {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      if (path.length === 0) return [def.shape ?? {}];
      return def.shape && String(path[0]) in def.shape ? objectsAt(def.shape[String(path[0])], path.slice(1)) : [];
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return objectsAt(def.innerType as z.ZodType, path);
    case 'pipe':
      return [...objectsAt(def.in as z.ZodType, path), ...objectsAt(def.out as z.ZodType, path)];
    case 'array':
      return typeof path[0] === 'number' ? objectsAt(def.element as z.ZodType, path.slice(1)) : [];
    case 'union':
      return (def.options ?? []).flatMap((option) => objectsAt(option, path));
    default:
      return [];
  }
}

/**
 * The keys allowed at `path`. Given the object found there, a union's forms are narrowed to those its literal fields
 * select: a part {"kind": "text", "data": {...}} was told "allowed fields: kind, text, data, file", listing the very
 * field refused (a text part takes kind and text only).
 */
export function allowedKeysAt(schema: z.ZodType, path: readonly PropertyKey[], given?: unknown): string[] {
  const shapes = objectsAt(schema, path);
  const selected = shapes.filter((shape) => selectedBy(shape, given));
  return [...new Set((selected.length > 0 ? selected : shapes).flatMap((shape) => Object.keys(shape)))];
}

/** Whether the object `given` has, for each literal field of `shape` it names, one of that field's values. */
function selectedBy(shape: Record<string, z.ZodType>, given: unknown): boolean {
  if (given === null || typeof given !== 'object' || Array.isArray(given)) return true;
  return Object.entries(shape).every(([key, field]) => {
    const { type, values } = defOf(field) as AnyDef & { values?: unknown[] };
    return type !== 'literal' || !(key in given) || (values ?? []).includes((given as Record<string, unknown>)[key]);
  });
}

const dotted = (path: readonly PropertyKey[]): string => path.map(String).join('.');

/** A teaching message about the whole input (teachingMessages.ts) reads with a subject: "the input must be ...". */
const ROOT_SUBJECT = /^(must|is required)/;

/** Fields that try to say who is sending: the caller's identity comes from its token only. */
const SENDER_FIELDS = new Set(['from', 'sender', 'sentBy']);

export function toMailboxError(schema: z.ZodType, error: z.ZodError, what: string): MailboxError {
  const unknown = error.issues.find((issue) => issue.code === 'unrecognized_keys');
  if (unknown && unknown.code === 'unrecognized_keys') {
    const fields = unknown.keys.map((key) => dotted([...unknown.path, key]));
    const { input } = unknown as { input?: unknown };
    const allowed = allowedKeysAt(schema, unknown.path, input);
    // The field each unknown one most likely meant ('state' -> 'to'), said beside it; never one the caller sent too.
    const given = input !== null && typeof input === 'object' ? Object.keys(input) : [];
    // The whole input wrapped in one key ({"arguments": {...}}): it meant no field, its fields are the call's own.
    const wrapper = unknown.path.length === 0 ? wrapperOf(unknown.keys, input, allowed) : null;
    const meant = unknown.keys.map((key) => (wrapper === null ? fieldsMeant(key, allowed, what, given) : []));
    const suggestions = [...new Set(meant.flat())];
    const named = fields.map((field, index) => {
      const near = meant[index].map((f) => `'${f}'`).join(' or ');
      return near ? `'${field}' (did you mean ${near}?)` : `'${field}'`;
    });
    const where = unknown.path.length ? ` in '${dotted(unknown.path)}'` : '';
    const valid = allowed.length ? `allowed fields${where}: ${allowed.join(', ')}` : `it takes no fields${where}`;
    const form = unknown.message === NOT_A_FIELD_HERE ? '' : `; ${unknown.message}`; // the schema's form (showingForm)
    const senderHint =
      // Not for a key that names another field here (the log's `from`, a position: 'after').
      unknown.path.length === 0 && unknown.keys.some((key, index) => SENDER_FIELDS.has(key) && meant[index].length === 0)
        ? ' Your identity comes from your token, never from the request.'
        : '';
    const recipientsHint = unknown.path.length === 0 ? moreRecipientsHint(what, unknown.keys, given) : '';
    const afterHint = unknown.path.length === 0 ? positionHint(what, unknown.keys, allowed) : '';
    const taskPartsHint = unknown.path.length === 0 ? partsHint(what, unknown.keys) : '';
    const unwrap = wrapper === null ? '' : unwrapHint(what, wrapper, input as Record<string, unknown>);
    return new MailboxError(
      'UNKNOWN_FIELD',
      'Unknown field',
      `${what} does not accept ${named.join(', ')}; ${valid}${form}.${senderHint}${recipientsHint}${afterHint}${taskPartsHint}${unwrap}`,
      { field: fields[0], fields, allowed, ...(suggestions.length > 0 ? { suggestions } : {}) },
    );
  }
  // One issue per field and message: a value can fail two checks that teach alike (1e20 is neither a safe integer nor
  // within the maximum), and "'leaseSeconds' takes ...; 'leaseSeconds' takes ..." said the same thing twice.
  const issues = uniqueIssues(
    withoutSizesOfTheWrongType(error.issues).map((issue) => ({
      field: dotted(issue.path),
      message: nullInsteadOfOmitted(schema, issue) ?? issue.message,
    })),
  );
  return new MailboxError('VALIDATION_FAILED', 'Validation failed', issuesMessage(what, issues), {
    field: issues[0].field,
    issues,
  });
}

/**
 * Every field that is wrong, in one message (a few at most): a caller, a model above all, fixes them in one retry
 * instead of meeting them one by one. `named`: how the caller names a field (the CLI: its flag, --thread for threadId).
 */
export function issuesMessage(
  what: string,
  issues: ReadonlyArray<{ field: string; message: string }>,
  named: (field: string) => string = (field) => field,
): string {
  const said = issues
    .slice(0, MAX_ISSUES_SAID)
    .map(({ field, message }) => `${subjectOf(field && named(field), message)}${message}`);
  const more = issues.length - said.length;
  return `${what}: ${said.join('; ')}${more > 0 ? `; and ${more} more (see issues)` : ''}`;
}

const MAX_ISSUES_SAID = 3;

/**
 * Without the size checks zod ran on a value of the wrong type: it checks a list's item count on a string's length
 * (and a string's length on an array), so a subject given as an array of 201 strings was told "'subject' must be
 * text ...; 'subject' must hold at most 200 items", artifacts given as text "... must be at most 32 characters long":
 * a form the field never takes. Where a field has the wrong type, its type is what it is told.
 */
function withoutSizesOfTheWrongType(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const mistyped = new Set(issues.filter((issue) => issue.code === 'invalid_type').map((issue) => dotted(issue.path)));
  const sized = (issue: z.core.$ZodIssue) => issue.code === 'too_big' || issue.code === 'too_small';
  return issues.filter((issue) => !(sized(issue) && mistyped.has(dotted(issue.path))));
}

/**
 * An optional field sent as null (`priority: null`, `limit: null`), told to leave it out: each field's own message said
 * what a value must be ("must be one of low, normal, high", "takes a whole number from 1 to 200"), not that the field
 * may be omitted, which is what a caller sending null means. One rule for every optional field, at any depth (a task's
 * `budget.maxTokens`): "must not be null: omit it for the default ("normal"); when given, it must be one of ...".
 * Undefined for any other issue (a required field's null is told its type: "must be text (a JSON string), not null").
 */
function nullInsteadOfOmitted(schema: z.ZodType, issue: z.core.$ZodIssue): string | undefined {
  const key = issue.path.at(-1);
  if ((issue as { input?: unknown }).input !== null || typeof key !== 'string') return undefined;
  const omitted = objectsAt(schema, issue.path.slice(0, -1))
    .map((shape) => shape[key]?.safeParse(undefined))
    .find((parsed) => parsed?.success);
  if (!omitted?.success) return undefined;
  const when = issue.message.replace(/, not null(?=$|:)/, '').replace(/ \(default [^)]*\)$/, '');
  const omit =
    omitted.data === undefined ? 'omit it if you have none' : `omit it for the default (${JSON.stringify(omitted.data)})`;
  return `must not be null: ${omit}; when given, it ${when}`;
}

function uniqueIssues(issues: Array<{ field: string; message: string }>): Array<{ field: string; message: string }> {
  const seen = new Set<string>();
  return issues.filter(({ field, message }) => {
    const key = JSON.stringify([field, message]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const subjectOf = (field: string, message: string): string =>
  field ? `'${field}' ` : ROOT_SUBJECT.test(message) ? 'the input ' : '';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  assertJsonDepth(input); // every surface, the library included; HTTP and MCP check it earlier still
  const result = schema.safeParse(input, { error: teachingMessage, reportInput: true }); // input: a null is told apart
  if (!result.success) throw toMailboxError(schema, result.error, what);
  // What was parsed, so that text decoded from a JSON string field (a task) is held to it too.
  assertWellFormedText(result.data, what);
  return result.data;
}
