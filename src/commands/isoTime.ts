/**
 * Times in the log are whole milliseconds (Date#toISOString), while a time input may be finer: ISO 8601 allows any
 * number of fraction digits, and the inputs accept them (z.iso.datetime). Date.parse keeps three and drops the
 * rest, so comparing its result with a logged time is wrong by up to a millisecond: `before: …00.000999Z` read as
 * …00.000Z and left out a message sent at …00.000Z, which was sent before it.
 */
import { z } from 'zod';
import { shownValue } from './shownValue';

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

/** The form a date and time input takes, after "must be". */
export const ISO_TIME_FORM = 'an ISO 8601 date and time with seconds and an offset (Z or +hh:mm), e.g. 2030-11-24T15:00:00Z';

const isoTime = z.iso.datetime({ offset: true });
const NEAR_ISO = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * The ISO time a near-miss is written as, quoted (with "(UTC)" when the value had no offset), or null: the date alone
 * (2026-12-01: midnight UTC), minutes without seconds, a space for the T, an offset written +hhmm, no offset. Only
 * suggested, never taken: the caller decides whether that is the time meant.
 */
export function isoTimeMeant(value: string): string | null {
  const near = NEAR_ISO.exec(value.trim());
  if (!near) return null;
  const [, date, minutes = '00:00', seconds = ':00', offset = 'Z'] = near;
  const zone = offset.toUpperCase() === 'Z' ? 'Z' : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
  const meant = `${date}T${minutes}${seconds}${zone}`;
  if (meant === value || !isoTime.safeParse(meant).success) return null;
  return `${JSON.stringify(meant)}${near[4] === undefined ? ' (UTC)' : ''}`;
}

/**
 * ", not "tomorrow"" or ", not "2026-12-01": did you mean "2026-12-01T00:00:00Z" (UTC)?": the refused value, cut
 * (shownValue), and what it nearly is: an ISO time, or what `otherMeant` says (a field's other forms).
 */
export function notTheTime(value: unknown, otherMeant: (text: string) => string | null = () => null): string {
  if (value === undefined) return '';
  const meant = typeof value === 'string' ? (isoTimeMeant(value) ?? otherMeant(value)) : null;
  return `, not ${shownValue(value)}${meant === null ? '' : `: did you mean ${meant}?`}`;
}
