/**
 * Durations in config and flags: "250ms", "90s", "10m", "1h", "1d", or a bare number of milliseconds. Days as the
 * server's expectsReplyBy takes them: `--idle 1d` was refused while a send's `expectsReplyBy: "1d"` was accepted.
 * In the shared kernel because one variable, MAILBOX_WAKE_SLA_MS, is read by the server's config, the heartbeat and
 * `audit unwoken`: the heartbeat took 2m while `mailbox serve` refused it.
 */
import { z } from 'zod';
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from './timerLimit';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
// The number and its unit written together, as expectsReplyBy takes them: "90 s" was taken here while a send refused it.
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;
const SPACED = /^(\d+(?:\.\d+)?)\s+(ms|s|m|h|d)$/;

/** The start of every refusal of this schema (config.ts keeps what follows it: a word on stray spaces). */
export const NOT_A_DURATION = 'must be a duration such as 250ms, 90s, 10m, 1h, 1d or a number of milliseconds';

/**
 * Milliseconds, or null when the text is not a duration (the schema turns that into a loud error). Read as written,
 * never trimmed: `--interval " 90s"` is not one of the forms (it was trimmed and taken as 90s).
 */
export function parseDurationMs(text: string): number | null {
  const match = DURATION.exec(text);
  if (!match) return null;
  // Whole milliseconds only: 1.5 (or 0.5ms) was rounded to 2, a value nobody wrote; 1.5s is 1500 and stays (within
  // a binary fraction's error: 1.1 * 1000 is 1100.0000000000002).
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 'ms'];
  const whole = Math.round(ms);
  return Math.abs(ms - whole) < 1e-6 ? whole : null;
}

/**
 * The milliseconds a duration stands for where a whole number of milliseconds is asked (MAILBOX_AWAIT_PROJECTION_MS=2s,
 * --grace-ms 1500ms, "2 s" with the unit apart), or null: suggested ("did you mean 2000?"), never taken. Spaces
 * around the text are not read away: ' 600' is not shown as 600 (it is told it must be plain digits).
 */
export function durationMeantMs(text: string): number | null {
  const spaced = SPACED.exec(text);
  return parseDurationMs(spaced ? `${spaced[1]}${spaced[2]}` : text);
}

// The error names the option and the field first ("--idle / MAILBOX_HEARTBEAT_IDLE: ... 'idleMs' must be ...").
export const durationSchema = z.preprocess(
  (value, ctx) => {
    if (typeof value !== 'string') return value;
    const ms = parseDurationMs(value);
    if (ms !== null) return ms;
    if (value.trim() !== value && parseDurationMs(value.trim()) !== null) {
      // Spaces around a valid duration: said, with the value as given (quoted: the error is a JSON line, so a tab shows as \t).
      ctx.addIssue({ code: 'custom', message: `${NOT_A_DURATION}, without spaces around it, not '${value}'` });
      return z.NEVER;
    }
    const spaced = SPACED.exec(value);
    if (spaced) {
      // Spaces between the number and its unit ("90 s"): said, with the duration written whole. Only there: "1 5s"
      // is not shown as 15s, a number the user never wrote.
      const whole = `${spaced[1]}${spaced[2]}`;
      ctx.addIssue({ code: 'custom', message: `${NOT_A_DURATION}, without spaces inside it: ${whole}, not '${value}'` });
      return z.NEVER;
    }
    return value;
  },
  z.number({ message: NOT_A_DURATION }).int().min(0),
);

/** A duration that becomes a timer's delay (the tick interval, a timeout, a backoff): refused beyond what a timer keeps. */
export const timerDurationSchema = durationSchema.pipe(z.number().max(MAX_TIMER_MS, `must be a duration of ${MAX_TIMER_TEXT}`));
