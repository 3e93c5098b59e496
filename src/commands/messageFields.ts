/**
 * Message field schemas (DESIGN section 3): priority, tags and the A2A task
 * envelope. Lossless-permissive: equivalent spellings and JSON-encoded strings
 * are accepted and stored canonically; unknown keys are rejected.
 */
import { z } from 'zod';
import { assertJsonDepth } from './jsonDepth';

export const PRIORITIES = ['low', 'normal', 'high'] as const;
export type Priority = (typeof PRIORITIES)[number];
export const prioritySchema = z.enum(PRIORITIES);

export const TASK_STATES = [
  'Submitted', 'Working', 'InputRequired', 'Completed', 'Canceled', 'Failed', 'Rejected', 'AuthRequired', 'Unknown',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** Lowercase letters only: 'input-required', 'TASK_STATE_INPUT_REQUIRED' and 'InputRequired' all become 'inputrequired'. */
const squash = (value: string): string => value.replace(/^TASK_STATE_/i, '').replace(/[-_\s]/g, '').toLowerCase();
const STATE_BY_SQUASHED = new Map<string, TaskState>([
  ...TASK_STATES.map((s) => [squash(s), s] as [string, TaskState]),
  ['cancelled', 'Canceled'], // A2A v1.0 spells it TASK_STATE_CANCELLED
]);

export const taskStateSchema = z.string().transform((value, ctx) => {
  const canonical = STATE_BY_SQUASHED.get(squash(value));
  if (canonical) return canonical;
  ctx.addIssue({
    code: 'custom',
    message: `Unknown task state '${value}'. Use one of ${TASK_STATES.join(', ')} ` +
      `(A2A v0.3 'input-required' and v1.0 'TASK_STATE_INPUT_REQUIRED' spellings are accepted).`,
    params: { allowed: TASK_STATES },
  });
  return z.NEVER;
});

const isoDate = z.iso.datetime({ offset: true });

const partSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('text'), text: z.string() }),
  z.strictObject({ kind: z.literal('data'), data: z.record(z.string(), z.unknown()) }),
  z.strictObject({
    kind: z.literal('file'),
    file: z.strictObject({ uri: z.string().min(1), mimeType: z.string().optional() }),
  }),
]);

export const taskEnvelopeSchema = z.strictObject({
  state: taskStateSchema.optional(),
  input: z.strictObject({ parts: z.array(partSchema) }).optional(),
  metadata: z.strictObject({
    sessionId: z.string().optional(),
    relatedTickets: z.array(z.string()).optional(),
    relatedDiscussions: z.array(z.string()).optional(),
    parentTask: z.string().optional(),
    priorComments: z.array(z.strictObject({ url: z.string(), commentId: z.string() })).optional(),
  }).optional(),
  expectedOutput: z.strictObject({
    shape: z.enum(['review', 'ticket', 'discussion', 'pr', 'free-form']),
    locationHint: z.string().optional(),
  }).optional(),
  budget: z.strictObject({
    deadline: isoDate.optional(),
    maxTokens: z.number().int().positive().optional(),
  }).optional(),
  expiresAt: isoDate.optional(),
});

export type TaskEnvelope = z.output<typeof taskEnvelopeSchema>;

/**
 * Accepts a value or its JSON encoding (lossless: same input, another form).
 * `what` is the field's name. Decoded JSON is held to the nesting limit before
 * it is validated (thrown as the envelope: a recursive validator must not see it).
 */
export const jsonOrValue = <T extends z.ZodType>(schema: T, what: string) =>
  z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    let decoded: unknown;
    try {
      decoded = JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${what} was a string but not valid JSON; send an object or its JSON encoding.` });
      return z.NEVER;
    }
    assertJsonDepth(decoded, [what]);
    return decoded;
  }, schema);

export const tagsSchema = z.array(z.string().min(1).max(64)).max(32);
