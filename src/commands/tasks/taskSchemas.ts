/**
 * The task commands' and listing's inputs (issue 12), one strict schema each;
 * the HTTP, MCP and library surfaces share them. State spellings are lossless
 * as in the task envelope: v0.3 ('input-required') and v1.0
 * ('TASK_STATE_INPUT_REQUIRED') forms are the same state.
 */
import { z } from 'zod';
import { pageSize, wholeNumber } from '../numberFields';
import { pageCursor } from '../pageCursor';
import { partSchema, taskStateSchema } from '../messageFields';
import { messageIdSchema } from '../schemas';
import { readableText } from '../readableText';
import { MAX_TASK_BYTES, withinJsonBytes } from '../jsonSize';
import { showingForm } from '../teachingMessages';
import { encodedOr } from '../encodedJson';
import { stateFilterSchema } from './stateFilter';

/** A week: a claim that needs longer holds no lease (it stays until released or finished). */
export const MAX_LEASE_SECONDS = 7 * 24 * 3600;

const taskId = messageIdSchema.describe("the task's id: the messageId of the message that carried it");

export const claimTaskSchema = z.strictObject({
  taskId,
  leaseSeconds: wholeNumber('seconds', 1, MAX_LEASE_SECONDS)
    .optional()
    .describe(
      'not for a direct task: hold the task for this many seconds; any update by you (or claiming again) renews it; if it ' +
        'lapses the task goes back to the audience and the next claim wins. Omit to hold it until you release or finish it.',
    ),
});

/**
 * Shown by every refusal of an artifact's shape (found as a model: `artifacts: "LGTM"`, `[{"text": "LGTM"}]` were told
 * the type or the fields allowed, not what an artifact looks like). In the refusal, not the tool's description: the
 * tool list a model reads each session is held to a byte budget.
 */
const AN_ARTIFACT = '{"name"?: "...", "parts": [{"kind": "text", "text": "..."}, ...]}';
const ARTIFACT_FORM = showingForm(
  `an artifact is ${AN_ARTIFACT}, e.g. "artifacts": [{"parts": [{"kind": "text", "text": "LGTM"}]}]`,
);

export const transitionTaskSchema = z.strictObject({
  taskId,
  to: taskStateSchema.describe(
    "the new state. Assignee: Working (accept), Rejected (only a direct task's recipient declines; reason), " +
      'InputRequired/AuthRequired (note), Completed (artifacts), Failed (reason), Submitted (give back a task you ' +
      'claimed). Sender: Canceled, or Working to answer InputRequired/AuthRequired. A2A spellings (input-required, ' +
      'TASK_STATE_INPUT_REQUIRED) accepted.',
  ),
  reason: readableText(2000, 'say why in words (1-2000 characters)')
    .optional()
    .describe('why (not only whitespace or invisible characters): required for Rejected and Failed'),
  note: readableText(8000, 'write the message in words (1-8000 characters)')
    .optional()
    .describe(
      'a message to the other party (not only whitespace or invisible characters): required for InputRequired and ' +
        'AuthRequired (your question), optional otherwise (a release to Submitted takes none)',
    ),
  // Also the list JSON-encoded as one string (an MCP client serialising nested arguments), as a task and tags are taken.
  artifacts: encodedOr(
    'artifacts',
    z
      .array(
        z.strictObject(
          { name: z.string().min(1).max(200).optional(), parts: z.array(partSchema, { error: ARTIFACT_FORM }).min(1) },
          { error: ARTIFACT_FORM },
        ),
        { error: ARTIFACT_FORM },
      )
      .max(32)
      .superRefine(withinJsonBytes('artifacts')),
    {
      kind: 'array',
      what: `a list of artifacts (an artifact is ${AN_ARTIFACT})`,
      example: '"artifacts": [{"parts": [{"kind": "text", "text": "LGTM"}]}]',
    },
  )
    .optional()
    .describe(
      'with Completed only: the output, as A2A artifacts of parts ({kind: text|data|file, ...}); at most ' +
        `${MAX_TASK_BYTES / 1024} KiB as JSON in all (link to larger output: a file part's uri)`,
    ),
});

export const TASK_LIST_VIEWS = ['assigned', 'claimable', 'sent'] as const;

export const listTasksSchema = z.strictObject({
  view: z
    .enum(TASK_LIST_VIEWS)
    .default('assigned')
    .describe('assigned: tasks you hold; claimable: AGENT:* or list tasks you may claim; sent: tasks you sent. Default assigned'),
  state: stateFilterSchema
    .optional()
    .describe('only tasks in these states: one state, an array, or comma-separated (e.g. Working,InputRequired)'),
  limit: pageSize(200, 50).describe('page size, 1..200, default 50'),
  cursor: pageCursor('nextCursor of the previous page, unchanged, with the same view and state; another use is CURSOR_MISMATCH'),
});
export type ListTasksInput = z.output<typeof listTasksSchema>;

export const getTaskSchema = z.strictObject({ taskId });
