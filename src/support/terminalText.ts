/**
 * Text that other agents wrote (a subject, a body, a thread id, tags), made safe to print on an operator's
 * terminal. Printed raw, an ESC starts a control sequence (clear the screen, recolour, retitle the window,
 * hide what follows), a CR returns to the start of the line and overwrites it, a newline in a subject starts
 * a line of the sender's choosing that reads like another message (`* ... @admin -> @b [high] ...`), and a
 * bidi override reorders what is shown. Each such character is shown as an escape instead (`\n`, `\x1b`,
 * `\u202e`): visible, never obeyed. `--json` output keeps the text as sent.
 */

/** C0 controls, DEL, C1 controls, the line and paragraph separators, and the bidi embeddings, overrides and isolates. */
// eslint-disable-next-line no-control-regex -- finding control characters is what this module is for
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** The same, less the tab and the line feed (a CRLF is a line break too), which lay out a body. */
// eslint-disable-next-line no-control-regex -- likewise
const UNSAFE_IN_BLOCK = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(character: string): string {
  const named = NAMED[character];
  if (named !== undefined) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line of text: every control, line break and bidi control shown as an escape. */
export const oneLine = (text: string): string => text.replace(UNSAFE_IN_LINE, escaped);

/** A block of text (a body): line breaks and tabs kept, every other control and bidi control shown as an escape. */
export const textBlock = (text: string): string => text.replace(UNSAFE_IN_BLOCK, escaped);

/** A string in JSON quotes (which escape the C0 controls), with the C1 and bidi controls that JSON leaves escaped too. */
export const quoted = (text: string): string => oneLine(JSON.stringify(text));
