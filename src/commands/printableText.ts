/**
 * A label that callers name and match exactly (a thread id, a tag): 1-`max` characters of printable text. Refused:
 * control characters (a line feed, an ESC), line and paragraph separators, the invisible formatting characters that
 * make two equal-looking labels differ or reorder what is shown (bidi controls, zero-width space, word joiner, byte
 * order mark), and whitespace at either end (`deploy ` is another label than `deploy`, and no one sees why). One rule
 * for every such label, so that they teach alike; each field's schema is used by its send and its filters alike, so
 * that a filter takes exactly what a send takes.
 */
import { z } from 'zod';
import { INVISIBLE_FORMATTING } from './invisibleCharacters';

const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029${INVISIBLE_FORMATTING}]`);
const EDGE_SPACE = /^\s|\s$/;

/** What the rule refuses, for the forms the messages and docs teach. */
export const PRINTABLE_REFUSED =
  'no control characters, line breaks, invisible or bidi formatting characters, nor whitespace at either end';

/** The form in short, for the schemas' descriptions: "1-64 printable characters, no whitespace at either end". */
export const printableShortForm = (max: number): string => `1-${max} printable characters, no whitespace at either end`;

/** A character by its code point, as the refusals name one: U+000A. */
export const codePoint = (character: string): string =>
  `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

export interface PrintableLabel {
  /** What one is called, as in "a thread id is ...": 'thread id', 'tag'. */
  noun: string;
  /** What a different value would be another one of: 'thread', 'tag'. */
  names: string;
  /** The most characters. */
  max: number;
  /** The whole form the messages teach, after "a <noun> is ...". */
  form: string;
  /**
   * A character that separates labels in a list written as text (the comma of `tags=ops,db`), so that none holds it:
   * the text then means one list only. `why` follows "holds a comma at index 3: ", given the value.
   */
  separator?: { character: string; name: string; why: (value: string) => string };
}

/**
 * The label's schema: 1-`max` characters, then printable text. A refusal names the character (its code point) and its
 * index in the value; the field's path (`tags.1`) names which one of a list it is.
 */
export function printableText({ noun, names, max, form, separator }: PrintableLabel) {
  const refine = (value: string, ctx: z.RefinementCtx): void => {
    const unprintable = UNPRINTABLE.exec(value);
    if (unprintable) {
      ctx.addIssue({
        code: 'custom',
        message: `holds ${codePoint(unprintable[0])} at index ${unprintable.index}, which is not printable: a ${noun} is ${form}`,
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
          `${where} with whitespace (${codePoint(edge[0])}): ${noun}s are matched exactly, so it would be another ${names} ` +
          `than the one without it; a ${noun} is ${form}`,
      });
      return;
    }
    const at = separator === undefined ? -1 : value.indexOf(separator.character);
    if (separator !== undefined && at >= 0) {
      ctx.addIssue({
        code: 'custom',
        message: `holds ${separator.name} at index ${at}: ${separator.why(value)}; a ${noun} is ${form}`,
        params: { index: at },
      });
    }
  };
  // No pattern advertised: the MCP tools' schemas stay compact, the description says the form.
  // Empty: the form too (`tags: "a,,b"` holds an empty tag between its commas; "must not be empty" alone taught nothing).
  return z
    .string()
    .min(1, { abort: true, error: `must not be empty: a ${noun} is ${form}` })
    .max(max, { abort: true })
    .superRefine(refine);
}
