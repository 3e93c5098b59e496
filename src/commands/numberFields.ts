/**
 * Whole-number fields, each with one message for every way it can be wrong that says the valid range (zod's own
 * wording answered `limit=abc` with "expected number, received NaN" and `limit=1.5` with "expected int, received
 * number": neither tells the caller what to send). Each takes a JSON number or its decimal digits as a string.
 */
import { z } from 'zod';
import { fromDecimalText } from '../support/decimalText';

/**
 * A page size (`limit`) as every listing takes it: from a query string, a CLI flag or a tool call, so read from text
 * too, in plain decimal digits only (z.coerce.number() is Number(): `limit=0x2` was 2, `limit=1e1` 10 and an empty
 * `limit=` 0).
 */
export function pageSize(max: number, fallback: number, min = 1) {
  const teaches = `takes a whole number from ${min} to ${max} (default ${fallback})`;
  return fromDecimalText(
    z.number({ error: teaches }).int({ error: teaches }).min(min, { error: teaches }).max(max, { error: teaches }),
    { teaches },
  ).default(fallback);
}

/**
 * A whole number in a JSON body or a tool call (a lease, a token budget). Its decimal digits as a string ("60") are
 * the same number in another form, as a page size's are (DESIGN: lossless-permissive): read as the number and kept
 * as one, so that every whole-number input takes the same two forms, whichever field and surface it is.
 */
export function wholeNumber(unit: string, min: number, max?: number) {
  const range = max === undefined ? `, ${min} or more,` : ` from ${min} to ${max},`;
  const example = Math.max(min, Math.min(max ?? 300, 300));
  const teaches = `takes a whole number of ${unit}${range} e.g. ${example}`;
  const atLeast = z.number({ error: teaches }).int({ error: teaches }).min(min, { error: teaches });
  return fromDecimalText(max === undefined ? atLeast : atLeast.max(max, { error: teaches }), { teaches });
}
