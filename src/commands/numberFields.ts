/**
 * Whole-number fields, each with one message for every way it can be wrong that says the valid range (zod's own
 * wording answered `limit=abc` with "expected number, received NaN" and `limit=1.5` with "expected int, received
 * number": neither tells the caller what to send). Each takes a JSON number or its decimal digits as a string.
 */
import { z } from 'zod';
import { fromDecimalText } from '../support/decimalText';
import { wholeUnitsOf } from './replyDeadline';
import { receivedOf } from './teachingMessages';

/**
 * A page size (`limit`) as every listing takes it: from a query string, a CLI flag or a tool call, so read from text
 * too, in plain decimal digits only (z.coerce.number() is Number(): `limit=0x2` was 2, `limit=1e1` 10 and an empty
 * `limit=` 0).
 */
export function pageSize(max: number, fallback: number, min = 1) {
  const teaches = `takes a whole number from ${min} to ${max} (default ${fallback})`;
  const error = saying(teaches);
  return fromDecimalText(z.number({ error }).int({ error }).min(min, { error }).max(max, { error }), { teaches }).default(
    fallback,
  );
}

/**
 * The range, then the value refused: `limit: 1000` was told "takes a whole number from 1 to 200 (default 50)" alone,
 * and a caller that computed the value did not see which one it sent; `maxTokens: true` did not see its true. Text is
 * told its own form by fromDecimalText; a null is told to omit the field (validation.ts reads the ", not null").
 */
const saying =
  (teaches: string) =>
  ({ input }: { input?: unknown }): string =>
    typeof input === 'number'
      ? `${teaches}, not ${input}`
      : input === undefined
        ? teaches
        : `${teaches}, not ${receivedOf(input)}`;

/**
 * A whole number in a JSON body or a tool call (a lease, a token budget). Its decimal digits as a string ("60") are
 * the same number in another form, as a page size's are (DESIGN: lossless-permissive): read as the number and kept
 * as one, so that every whole-number input takes the same two forms, whichever field and surface it is.
 */
export function wholeNumber(unit: string, min: number, max?: number) {
  const unitMs = DURATION_UNITS_MS[unit];
  const range = max === undefined ? `, ${min} or more,` : ` from ${min} to ${max},`;
  const example = Math.max(min, Math.min(max ?? 300, 300));
  const teaches = `takes a whole number of ${unit}${range} e.g. ${example}`;
  const error = saying(teaches);
  const atLeast = z.number({ error }).int({ error }).min(min, { error });
  // "leaseSeconds": "5m" is told ": did you mean 300?" (the deadline's duration forms, read as this unit).
  const meant = unitMs === undefined ? undefined : (text: string) => wholeUnitsOf(text, unitMs);
  return fromDecimalText(max === undefined ? atLeast : atLeast.max(max, { error }), { teaches, meant });
}

/** Units a duration can be given in instead (5m, PT5M, "5 minutes"), in milliseconds. */
const DURATION_UNITS_MS: Record<string, number | undefined> = { seconds: 1000, milliseconds: 1 };
