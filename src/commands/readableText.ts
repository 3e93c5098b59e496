/**
 * Text that a reader is given to read (a subject, a reason, a question): at least one character that shows
 * something. Text of spaces, tabs or line breaks only says nothing, like empty text, and so does text of invisible
 * characters (a zero-width space, a word joiner, a byte order mark, a bidi control: invisibleCharacters.ts), alone
 * or among whitespace: it is refused as empty text is, with the valid form; text with something in it is kept as
 * sent (never trimmed).
 */
import { z } from 'zod';
import { INVISIBLE } from './invisibleCharacters';

/** One character that is neither whitespace nor invisible. */
const SOMETHING_TO_READ = new RegExp(`[^\\s${INVISIBLE}]`);

/**
 * `max` characters at most; `form` says what to give instead (after "must not be blank ..."). The schemas advertise
 * `pattern: "\S"` (OpenAPI, the MCP tools' input schemas): what the check needs in short (the tools list has no long
 * regexes), the invisible characters said in the message and the descriptions.
 */
export const readableText = (max: number, form: string) =>
  z
    .string()
    .min(1, { abort: true }) // empty text: "must not be empty" once, not also "blank"
    .max(max)
    .regex(
      SOMETHING_TO_READ,
      `must not be blank (only spaces, tabs, line breaks or invisible characters such as U+200B zero-width space): ${form}`,
    )
    .meta({ pattern: '\\S' });
