/**
 * Message field schemas (DESIGN section 3): priority, tags and the A2A task
 * envelope. Lossless-permissive: equivalent spellings and JSON-encoded strings
 * are accepted and stored canonically; unknown keys are rejected.
 */
import { z } from 'zod';
import { wholeNumber } from './numberFields';
import { deadlineTimeSchema } from './isoTime';
import { PRIORITIES, TASK_STATES } from '../events/storedShapes';
import type { TaskEnvelope, TaskState } from '../events/types';
import { decodedJson, isJson } from './encodedJson';
import { PRINTABLE_REFUSED, printableShortForm, printableText } from './printableText';
import { shownValue } from './shownValue';
import { showingForm } from './teachingMessages';

// The stored shapes belong to the events; the input schemas below accept more spellings and must produce them.
export { PRIORITIES, TASK_STATES };
export type { Priority, TaskEnvelope, TaskState } from '../events/types';
export const prioritySchema = z.enum(PRIORITIES);

/**
 * A task state is taken in the spellings DESIGN names, each exactly as written: the stored PascalCase ('InputRequired'),
 * A2A v0.3's ('input-required') and A2A v1.0's ('TASK_STATE_INPUT_REQUIRED'; Canceled also as TASK_STATE_CANCELLED, and
 * Unknown as TASK_STATE_UNSPECIFIED, as GET /v1/tasks/{id} answers it). Any other case or separator ('COMPLETED',
 * 'input_required', 'Input Required') was taken for the state, while every other value of a set (a priority 'High', a
 * box 'Outbox', a view 'Claimable') is refused naming the value meant: it is now refused alike (suggested, never taken).
 */
export const TASK_STATE_SPELLINGS = {
  Submitted: 'Submitted',
  submitted: 'Submitted',
  TASK_STATE_SUBMITTED: 'Submitted',
  Working: 'Working',
  working: 'Working',
  TASK_STATE_WORKING: 'Working',
  InputRequired: 'InputRequired',
  'input-required': 'InputRequired',
  TASK_STATE_INPUT_REQUIRED: 'InputRequired',
  AuthRequired: 'AuthRequired',
  'auth-required': 'AuthRequired',
  TASK_STATE_AUTH_REQUIRED: 'AuthRequired',
  Completed: 'Completed',
  completed: 'Completed',
  TASK_STATE_COMPLETED: 'Completed',
  Canceled: 'Canceled',
  canceled: 'Canceled',
  TASK_STATE_CANCELED: 'Canceled',
  TASK_STATE_CANCELLED: 'Canceled',
  Failed: 'Failed',
  failed: 'Failed',
  TASK_STATE_FAILED: 'Failed',
  Rejected: 'Rejected',
  rejected: 'Rejected',
  TASK_STATE_REJECTED: 'Rejected',
  Unknown: 'Unknown',
  unknown: 'Unknown',
  TASK_STATE_UNSPECIFIED: 'Unknown',
} as const satisfies Record<string, TaskState>;

/** A task state as it may be written (TASK_STATE_SPELLINGS): the library types update_task's `to` with it. */
export type TaskStateSpelling = keyof typeof TASK_STATE_SPELLINGS;

const STATE_BY_SPELLING = new Map<string, TaskState>(Object.entries(TASK_STATE_SPELLINGS));

/** Lowercase letters only: 'input-required', 'TASK_STATE_INPUT_REQUIRED' and 'Input Required' all become 'inputrequired'. */
const squash = (value: string): string =>
  value
    .replace(/^TASK_STATE_/i, '')
    .replace(/[-_\s]/g, '')
    .toLowerCase();
/** The state a spelling in another case or with other separators stands for: suggested, never taken. */
const STATE_BY_SQUASHED = new Map<string, TaskState>([
  ...TASK_STATES.map((s) => [squash(s), s] as [string, TaskState]),
  ['cancelled', 'Canceled'], // A2A v1.0 spells it TASK_STATE_CANCELLED
  ['unspecified', 'Unknown'], // A2A v1.0 has no UNKNOWN: TASK_STATE_UNSPECIFIED, as GET /v1/tasks/{id} answers it
]);

/**
 * Words a model uses for a state that is not one (found probing update_task as a model: to "done"): suggested, never
 * taken (DESIGN: suggest, never substitute), so that a wrong word never moves a task.
 */
const STATE_MEANT = new Map<string, TaskState>([
  ...['done', 'complete', 'finished', 'success', 'succeeded', 'resolved'].map((w) => [w, 'Completed'] as [string, TaskState]),
  ...['inprogress', 'started', 'accepted', 'active', 'running'].map((w) => [w, 'Working'] as [string, TaskState]),
  ...['declined', 'refused'].map((w) => [w, 'Rejected'] as [string, TaskState]),
  ...['error', 'failure', 'errored'].map((w) => [w, 'Failed'] as [string, TaskState]),
  ...['cancel', 'aborted'].map((w) => [w, 'Canceled'] as [string, TaskState]),
  ...['released', 'open', 'unclaimed', 'pending', 'queued'].map((w) => [w, 'Submitted'] as [string, TaskState]),
  ...['needsinput', 'blocked'].map((w) => [w, 'InputRequired'] as [string, TaskState]),
]);

/** The state a word names, written exactly in one of its spellings, else undefined. */
export const stateNamed = (value: string): TaskState | undefined => STATE_BY_SPELLING.get(value);

/**
 * The state a word that is none most likely means: one written in another case or with other separators ('COMPLETED',
 * 'input_required'), or a word for one ('done': Completed); else undefined. Suggested, never taken.
 */
export const stateMeant = (value: string): TaskState | undefined =>
  STATE_BY_SQUASHED.get(squash(value)) ?? STATE_MEANT.get(squash(value));

/** A word as states are compared: lowercase letters only, without a TASK_STATE_ prefix. */
export const squashedStateWord = (value: string): string => squash(value);

export const taskStateSchema = z.string().transform((value, ctx) => {
  const canonical = stateNamed(value);
  if (canonical) return canonical;
  const spelled = STATE_BY_SQUASHED.get(squash(value));
  const meant = spelled ?? STATE_MEANT.get(squash(value));
  ctx.addIssue({
    code: 'custom',
    message:
      // Read after the field's name as every refusal is ("'to' must be ..."), with the value cut (a body sent as a state).
      `must be a task state: one of ${TASK_STATES.join(', ')} (A2A v0.3 'input-required' and v1.0 ` +
      `'TASK_STATE_INPUT_REQUIRED' spellings are accepted), not ${shownValue(value)}` +
      (meant === undefined ? '' : `: did you mean ${meant}?${spelled === undefined ? '' : ' (written exactly so)'}`),
    params: { allowed: TASK_STATES },
  });
  return z.NEVER;
});

/** A part's forms, as a refusal shows them. */
const PART_FORMS =
  '{"kind": "text", "text": "..."}, {"kind": "data", "data": {...}} or {"kind": "file", "file": {"uri": "...", "mimeType"?: "..."}}';

/**
 * A part written as an MCP content block, {"type": "text", "text": "done"} (a model's habit: its tool results are such
 * blocks), was told its fields and the forms, not that "type" is the word to change: said, with the part as it is
 * written (its text cut), or the kinds there are when its type is none of them ("image"). '' for any other part.
 */
function typeForKind(part: Record<string, unknown>): string {
  const { type } = part;
  if (type === undefined) return '';
  const said = ': a part names its kind in "kind", where an MCP content block says "type"';
  if (type === 'text' && typeof part.text === 'string' && Object.keys(part).length === 2)
    return `${said}: write it {"kind": "text", "text": ${shownValue(part.text)}}`;
  if (type === 'data' || type === 'file') return `${said}: write it {"kind": "${type}", ...} with the same fields`;
  return `${said}; the kinds are text, data and file (other content, such as an image, goes in a file part by its uri)`;
}

/**
 * A part of a task's input or an artifact (A2A parts, with their kind). One with no kind (A2A v1.0's {"text": "hi"}) or
 * another key for it ({"type": "text"}) was refused "Invalid discriminator value. Expected 'text' | 'data' | 'file'",
 * naming neither the key nor the forms: the refusal now shows both, and what the part had.
 */
export const partSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('text'), text: z.string() }),
    z.strictObject({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()) }),
    z.strictObject({
      kind: z.literal('file'),
      file: z.strictObject({ uri: z.string().min(1), mimeType: z.string().optional() }),
    }),
  ],
  {
    error: (issue) => {
      const { input } = issue;
      if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
      const fields = Object.keys(input).slice(0, 10);
      const kind = (input as { kind?: unknown }).kind;
      const had =
        kind === undefined
          ? `this one has no "kind" (its fields: ${fields.length ? fields.join(', ') : 'none'})`
          : `"kind" ${JSON.stringify(kind).slice(0, 40)} is none of text, data, file`;
      return `each part is ${PART_FORMS}; ${had}${kind === undefined ? typeForKind(input as Record<string, unknown>) : ''}`;
    },
  },
);

/**
 * Shown by every refusal of a task input's shape: a model writes `"input": "please review"` or `{"text": "..."}`, and
 * was told "must be an object (a JSON object of fields), not text" or "allowed fields in 'task.input': parts." alone,
 * not what an input looks like (as an artifact's refusal shows an artifact).
 */
const INPUT_FORM = showingForm(
  'a task\'s input is {"parts": [{"kind": "text", "text": "..."}, ...]}, e.g. "input": {"parts": [{"kind": "text", ' +
    '"text": "please review"}]}',
);

export const taskEnvelopeSchema = z.strictObject({
  state: taskStateSchema.optional(),
  input: z.strictObject({ parts: z.array(partSchema, { error: INPUT_FORM }) }, { error: INPUT_FORM }).optional(),
  metadata: z
    .strictObject({
      sessionId: z.string().optional(),
      relatedTickets: z.array(z.string()).optional(),
      relatedDiscussions: z.array(z.string()).optional(),
      parentTask: z.string().optional(),
      priorComments: z.array(z.strictObject({ url: z.string(), commentId: z.string() })).optional(),
    })
    .optional(),
  expectedOutput: z
    .strictObject({
      shape: z.enum(['review', 'ticket', 'discussion', 'pr', 'free-form']),
      locationHint: z.string().optional(),
    })
    .optional(),
  budget: z
    .strictObject({
      deadline: deadlineTimeSchema.optional(),
      maxTokens: wholeNumber('tokens', 1).optional(),
    })
    .optional(),
  expiresAt: deadlineTimeSchema.optional(),
});

/** Compile-time link: whatever the input accepts must normalise to the stored envelope (a wider input fails to build). */
type Assignable<T extends TaskEnvelope> = T;
export type TaskEnvelopeInput = Assignable<z.output<typeof taskEnvelopeSchema>>;

export const MAX_TAG_CHARS = 64;
export const MAX_TAGS = 32;

/** The form in short, for the schemas' descriptions. */
export const TAG_SHORT_FORM = `${printableShortForm(MAX_TAG_CHARS)}, no comma`;

/** The form, for the messages. */
export const TAG_FORM = `1-${MAX_TAG_CHARS} characters of printable text without a comma, e.g. "review" or "deploy-2030" (${PRINTABLE_REFUSED})`;

/** How a list of tags is written, for the messages. */
export const TAG_LIST_FORMS =
  'a list such as ["review", "urgent"], that list JSON-encoded, or comma-separated text: review,urgent';

/**
 * One tag, as a send takes it and the `tags` filter matches it (exactly): printable text as a thread id is
 * (printableText.ts), so that a tag cannot forge a line or hide a character in every inbox that shows it. No comma: a
 * comma separates tags in the comma-separated form of a list (send and filter alike), so `review,urgent` is the two
 * tags and can mean nothing else. Tags an older version stored in another form are still served (the stored shape
 * takes any string).
 */
export const tagSchema = printableText({
  noun: 'tag',
  names: 'tag',
  max: MAX_TAG_CHARS,
  form: TAG_FORM,
  separator: {
    character: ',',
    name: 'a comma',
    why: (value) =>
      `a comma separates tags (${shownValue(value)} as text is the tags ${shownValue(value.split(',').map((tag) => tag.trim()))}), ` +
      'so no tag holds one: send several tags as a list, or write one with another character such as - or /',
  },
});
/**
 * A tag given twice is refused, naming the repeat and the entry it repeats: kept, a send stored it twice (every reader
 * saw ["ops", "ops"]); dropped, the input would be altered unsaid. Tags that differ in case are two tags.
 */
export const tagsSchema = z
  .array(tagSchema)
  .max(MAX_TAGS)
  .superRefine((tags, ctx) => {
    const first = new Map<string, number>();
    tags.forEach((tag, index) => {
      const earlier = first.get(tag);
      if (earlier === undefined) first.set(tag, index);
      else
        ctx.addIssue({
          code: 'custom',
          path: [index],
          message: `repeats ${shownValue(tag)} (tags.${earlier}): give each tag once`,
        });
    });
  });

/**
 * A list of tags in each of its forms, one rule for a send's `tags` and the `tags` filter (MCP and HTTP alike): an
 * array, its JSON encoding, or comma-separated text (`review,urgent`, `ops, db`: the spaces around each comma are
 * dropped, as no tag begins or ends with whitespace). Text that starts with [ is JSON or refused, never split.
 */
export const tagListSchema = z
  .preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    const text = value.trim();
    // The encoding of one text or an object ('"ops"', '{"tag": "ops"}'), split as text, was kept quotes and all.
    if (text.startsWith('"') || text.startsWith('{')) {
      const other = decodedJson(text, 'tags');
      if (isJson(other)) {
        ctx.addIssue({
          code: 'custom',
          message:
            `is the JSON encoding of ${typeof other === 'string' ? `text ${shownValue(other)}` : 'an object'}, not of a ` +
            `list: send ${TAG_LIST_FORMS}`,
        });
        return z.NEVER;
      }
    }
    if (!text.startsWith('[')) return value.split(',').map((tag) => tag.trim());
    const decoded = decodedJson(value, 'tags'); // the JSON-encoded form, read as every encoded field is (encodedJson.ts)
    if (isJson(decoded)) return decoded;
    ctx.addIssue({
      code: 'custom',
      message: `starts with [ but is not a valid JSON array (${shownValue(value)}); send ${TAG_LIST_FORMS}`,
    });
    return z.NEVER;
  }, tagsSchema)
  .meta({ encodedForm: 'comma-separated or JSON-encoded' }); // the string forms, for the advertised schemas
