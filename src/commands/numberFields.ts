/**
 * Whole-number fields, each with one message for every way it can be wrong that says the valid range (zod's own
 * wording answered `limit=abc` with "expected number, received NaN", `limit=1.5` with "expected int, received
 * number" and `"leaseSeconds": "60"` with "expected number, received string": none tells the caller what to send).
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

/** A whole number in a JSON body (not coerced: "60" is refused, with the form to send). */
export function wholeNumber(unit: string, min: number, max?: number) {
  const range = max === undefined ? `, ${min} or more,` : ` from ${min} to ${max}`;
  const example = Math.max(min, Math.min(max ?? 300, 300));
  const teaches = `takes a whole number of ${unit}${range} as a JSON number, e.g. ${example}`;
  const atLeast = z.number({ error: teaches }).int({ error: teaches }).min(min, { error: teaches });
  return max === undefined ? atLeast : atLeast.max(max, { error: teaches });
}
