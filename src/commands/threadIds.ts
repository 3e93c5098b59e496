/**
 * A thread id (DESIGN sections 3 and 4): the label that groups a conversation in each inbox, matched exactly by the
 * `threadId` filter. A send that omits it starts a thread named by its message id, a reply inherits its parent's;
 * given, it names a thread: 1-200 characters of printable text (a message id, or a name such as `deploy-2030-05`).
 * Refused: control characters (a line feed, an ESC), line and paragraph separators, the invisible formatting
 * characters that make two equal-looking ids differ or reorder what is shown (bidi controls, zero-width space, word
 * joiner, byte order mark), and whitespace at either end (`deploy ` is another thread than `deploy`, and no one
 * sees why). One schema for the send, the inbox and outbox filter and mark_read's filter, so that a filter takes
 * exactly what a send takes.
 */
import { z } from 'zod';

export const MAX_THREAD_ID_CHARS = 200;

// eslint-disable-next-line no-control-regex -- finding control characters is what this rule is for
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;
const EDGE_SPACE = /^\s|\s$/;

/** The form in short, for the schemas' descriptions. */
export const THREAD_ID_SHORT_FORM = `1-${MAX_THREAD_ID_CHARS} printable characters, no whitespace at either end`;

/** The form, for the messages. */
export const THREAD_ID_FORM =
  `1-${MAX_THREAD_ID_CHARS} characters of printable text, e.g. a message id or a name such as "deploy-2030-05" ` +
  '(no control characters, line breaks, invisible or bidi formatting characters, nor whitespace at either end)';

const codePoint = (character: string): string => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function printable(value: string, ctx: z.RefinementCtx): void {
  const unprintable = UNPRINTABLE.exec(value);
  if (unprintable) {
    ctx.addIssue({
      code: 'custom',
      message: `holds ${codePoint(unprintable[0])} at index ${unprintable.index}, which is not printable: a thread id is ${THREAD_ID_FORM}`,
      params: { index: unprintable.index },
    });
    return;
  }
  const edge = EDGE_SPACE.exec(value);
  if (edge) {
    const where = edge.index === 0 ? 'begins' : 'ends';
    ctx.addIssue({
      code: 'custom',
      message:
        `${where} with whitespace (${codePoint(edge[0])}): thread ids are matched exactly, so it would be another thread ` +
        `than the one without it; a thread id is ${THREAD_ID_FORM}`,
    });
  }
}

export const threadIdSchema = z.string().min(1, { abort: true }).max(MAX_THREAD_ID_CHARS, { abort: true }).superRefine(printable); // no pattern advertised: the MCP tools' schemas stay compact, the description says the form
