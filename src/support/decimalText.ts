/**
 * Numbers written as text (environment variables, CLI flags) are read in plain decimal only. z.coerce.number() is
 * Number(), which also reads '0x1DB1' (7601), '0b11', '0o17', '1e3' and ' 12 ': MAILBOX_PORT=0x1DB1 bound port 7601
 * while the error for a bad port promised "an integer", and '0x10' set 16 where the operator may have meant 10. Such
 * text is refused with the form; a number passes as it is (the library's settings are numbers already).
 */
import { z } from 'zod';

/** The start of the issue's message: config.ts recognises it to add the form to its one-line error. */
export const NOT_DECIMAL = 'must be written in plain decimal digits';

const WHOLE = /^\d+$/;
const WITH_FRACTION = /^\d+(\.\d+)?$/;

/**
 * The schemas fromDecimalText made, with the form of their text: JSON Schema documents them as the number they read,
 * and where text is not all a value can be (a JSON body, a tool call), as that text too (application/jsonSchema.ts).
 */
const decimalTextSchemas = new WeakMap<object, RegExp>();

export const isDecimalText = (schema: object): boolean => decimalTextSchemas.has(schema);

/** The pattern of the text a schema of fromDecimalText reads (undefined for any other schema). */
export const decimalTextPattern = (schema: object): string | undefined => decimalTextSchemas.get(schema)?.source;

/**
 * `schema` (a z.number() with its checks) fed from decimal text: digits only, or with `fraction`, digits, a point and
 * digits (0.5). No sign: no setting read this way takes a negative value, and '-1' is refused all the same.
 * `teaches`, when given, starts the refusal of text that is not decimal ("takes a whole number from 1 to 200 (default
 * 50), written in plain decimal digits, not '0x2'"): a query parameter or a flag says its range along with the form.
 * `meant`, when given, reads the number other text stands for (a duration for a number of seconds), named after it.
 */
export function fromDecimalText<T extends z.ZodType>(
  schema: T,
  { fraction = false, teaches, meant }: { fraction?: boolean; teaches?: string; meant?: (text: string) => number | null } = {},
) {
  const form = fraction ? WITH_FRACTION : WHOLE;
  const parsed = z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    if (form.test(value)) return Number(value);
    // The number the text stands for ("5m" of seconds: 300), when the schema would take it: suggested, never taken.
    const number = meant?.(value) ?? null;
    const suggested = number !== null && schema.safeParse(number).success ? `: did you mean ${number}?` : '';
    const written = `${NOT_DECIMAL}${fraction ? ' (a point before a fraction, e.g. 0.5)' : ''}, not '${value}'${suggested}`;
    ctx.addIssue({
      code: 'custom',
      message: teaches === undefined ? written : `${teaches}, ${written.replace(/^must be /, '')}`,
    });
    return z.NEVER;
  }, schema);
  decimalTextSchemas.set(parsed, form);
  return parsed;
}
