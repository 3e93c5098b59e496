/**
 * `expectsReplyBy` (issue 13): when the sender expects each recipient to
 * answer in the thread. An ISO 8601 time with an offset (2030-11-24T15:00:00Z)
 * or a duration from the send: 90s, 30m, 2h, 1d, or ISO 8601 (PT30M, P1D,
 * P1DT2H). Anything else, or a time not after the send, is refused with the
 * forms; nothing is written.
 */
import { z } from 'zod';
import { MailboxError } from '../errors';
import { msCeiling, notTheTime } from './isoTime';

const SHORT = /^(\d+)(s|m|h|d)$/;
const ISO_DURATION = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const isoTime = z.iso.datetime({ offset: true });

export const VALID_FORMS =
  'an ISO 8601 time with an offset after now (e.g. 2030-11-24T15:00:00Z) or a duration from now: 90s, 30m, 2h, 1d, PT30M, P1DT2H';

export const expectsReplyBySchema = z
  .string()
  .refine((value) => durationMs(value) !== null || isoTime.safeParse(value).success, {
    // The error names the field first ("'expectsReplyBy' must be ..."), then the value refused, as every refusal does.
    error: (issue) => `must be ${VALID_FORMS}${notTheTime(issue.input, durationMeant)}`,
  })
  .describe(
    'when each recipient should have answered in the thread: ' +
      `${VALID_FORMS}. Overdue: the recipient is nudged once, then you get a reply-overdue wake naming who has not answered`,
  );

const WORDED = /^(?:in\s+)?(\d+)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)$/i;

/** The duration "2 hours", "in 30 min" or "1 day" is written as ("2h", "30m", "1d"; quoted), or null: suggested, never taken. */
export function durationMeant(text: string): string | null {
  const meant = wordedDuration(text);
  return meant !== null && meant !== text ? JSON.stringify(meant) : null;
}

/** "2 hours" -> "2h": the short form of a worded duration, or null. */
function wordedDuration(text: string): string | null {
  const worded = WORDED.exec(text.trim());
  if (!worded) return null;
  const meant = `${Number(worded[1])}${worded[2][0].toLowerCase()}`;
  return durationMs(meant) !== null ? meant : null;
}

/**
 * The whole number of `unitMs` units a duration in any form a deadline takes (5m, PT5M, "5 minutes") is, or null:
 * a number field ("leaseSeconds": "5m") suggests it, never takes it.
 */
export function wholeUnitsOf(text: string, unitMs: number): number | null {
  const worded = wordedDuration(text);
  const ms = durationMs(text) ?? (worded === null ? null : durationMs(worded));
  return ms !== null && ms > 0 && ms % unitMs === 0 ? ms / unitMs : null;
}

/** Milliseconds of a duration, or null when the text is none. */
export function durationMs(text: string): number | null {
  const short = SHORT.exec(text);
  if (short) return Number(short[1]) * UNIT_MS[short[2]];
  const iso = ISO_DURATION.exec(text);
  if (!iso || text === 'P' || text.endsWith('T')) return null;
  const [, d, h, m, s] = iso.map((part) => Number(part ?? 0));
  return d * UNIT_MS.d + h * UNIT_MS.h + m * UNIT_MS.m + s * UNIT_MS.s;
}

/**
 * The latest due time: the last instant with a four-digit year, as the ISO form itself is written. A duration
 * can reach far beyond it (100000000d), past what a Date holds at all; such a time is refused, not stored.
 */
export const LATEST_DUE_BY = '9999-12-31T23:59:59.999Z';
const LATEST_DUE_MS = Date.parse(LATEST_DUE_BY);

/** The absolute time the reply is due (ISO, UTC), from the send time; an error when it is not after the send, or too far. */
export function replyDueBy(expectsReplyBy: string, sentAt: string): string | MailboxError {
  const duration = durationMs(expectsReplyBy);
  // An ISO time finer than a millisecond is rounded up (Date.parse cut it: the reply was due up to 1 ms early).
  const dueMs = duration !== null ? Date.parse(sentAt) + duration : msCeiling(expectsReplyBy);
  if (!(dueMs <= LATEST_DUE_MS)) {
    return new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `expectsReplyBy '${expectsReplyBy}' is too far ahead: it falls after ${LATEST_DUE_BY}, the latest due time; ` +
        `give ${VALID_FORMS}.`,
      { field: 'expectsReplyBy', value: expectsReplyBy, latest: LATEST_DUE_BY },
    );
  }
  if (dueMs <= Date.parse(sentAt)) {
    return new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `expectsReplyBy '${expectsReplyBy}' is not after the send (${sentAt}); give ${VALID_FORMS}.`,
      { field: 'expectsReplyBy', value: expectsReplyBy },
    );
  }
  return new Date(dueMs).toISOString();
}
