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
 * `schema` (a z.number() with its checks) fed from decimal text: digits only, or with `fraction`, digits, a point and
 * digits (0.5). No sign: no setting read this way takes a negative value, and '-1' is refused all the same.
 */
export function fromDecimalText<T extends z.ZodType>(schema: T, { fraction = false } = {}) {
  const form = fraction ? WITH_FRACTION : WHOLE;
  return z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    if (form.test(value)) return Number(value);
    ctx.addIssue({
      code: 'custom',
      message: `${NOT_DECIMAL}${fraction ? ' (a point before a fraction, e.g. 0.5)' : ''}, not '${value}'`,
    });
    return z.NEVER;
  }, schema);
}
