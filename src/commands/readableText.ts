/**
 * Text that a reader is given to read (a subject, a reason, a question): at least one character that is not
 * whitespace. Text of spaces, tabs or line breaks only says nothing, like empty text, so it is refused as empty
 * text is, with the valid form; text with something in it is kept as sent (never trimmed).
 */
import { z } from 'zod';

/** The schema advertises it too: OpenAPI and the MCP tools' input schemas carry `pattern: "\S"`. */
const SOMETHING_TO_READ = /\S/;

/** `max` characters at most; `form` says what to give instead (after "must not be blank ..."). */
export const readableText = (max: number, form: string) =>
  z
    .string()
    .min(1, { abort: true }) // empty text: "must not be empty" once, not also "blank"
    .max(max)
    .regex(SOMETHING_TO_READ, `must not be blank (only spaces, tabs or line breaks): ${form}`);
