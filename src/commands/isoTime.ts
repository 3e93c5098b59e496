/**
 * Times in the log are whole milliseconds (Date#toISOString), while a time input may be finer: ISO 8601 allows any
 * number of fraction digits, and the inputs accept them (z.iso.datetime). Date.parse keeps three and drops the
 * rest, so comparing its result with a logged time is wrong by up to a millisecond: `before: …00.000999Z` read as
 * …00.000Z and left out a message sent at …00.000Z, which was sent before it.
 */
import { z } from 'zod';

/**
 * The first whole millisecond not before `iso` (a valid ISO 8601 time): a logged time t is before `iso` exactly
 * when t < msCeiling(iso).
 */
export function msCeiling(iso: string): number {
  let finer = false;
  // Only a time's seconds carry a fraction (the date has no '.'): keep milliseconds, note whether anything finer was there.
  const inMs = iso.replace(/\.(\d+)/, (_, digits: string) => {
    finer = /[1-9]/.test(digits.slice(3));
    return `.${digits.slice(0, 3).padEnd(3, '0')}`;
  });
  return Date.parse(inMs) + (finer ? 1 : 0);
}

/** The latest time kept: the last instant with a four-digit year, as the ISO form itself is written. */
export const LATEST_TIME = '9999-12-31T23:59:59.999Z';

/**
 * A deadline as kept: the time itself when it has at most three fraction digits, else the first whole millisecond
 * not before it, in UTC (Python's isoformat writes six digits: `…00.123456+00:00` is kept as `…00.124Z`). Date.parse
 * cut the rest, so a deadline fell up to a millisecond earlier than asked; rounded up it never does, and the stored
 * and echoed value is the one kept. Null when rounding up passes LATEST_TIME (no four-digit year holds it).
 */
export function deadlineAsKept(iso: string): string | null {
  if (!/\.\d{4}/.test(iso)) return iso;
  const ms = msCeiling(iso);
  return ms <= Date.parse(LATEST_TIME) ? new Date(ms).toISOString() : null;
}

/** An ISO 8601 deadline input (with an offset), kept as deadlineAsKept says. */
export const deadlineTimeSchema = z.iso.datetime({ offset: true }).transform((value, ctx) => {
  const kept = deadlineAsKept(value);
  if (kept !== null) return kept;
  ctx.addIssue({
    code: 'custom',
    message: `must be at most ${LATEST_TIME}: times are kept to the millisecond, rounded up, and '${value}' rounds up past it`,
  });
  return z.NEVER;
});
