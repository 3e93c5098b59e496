/** The parts times are read from in the console (web/src/instant.tsx puts them together): local clock time, spans. */
// One formatter for every row: toLocaleTimeString(locale, options) builds a new one per call, which the
// live flow measured as its largest cost at 1,000 rows a second.
const TIME = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

const DAY = new Intl.DateTimeFormat([], { year: 'numeric', month: '2-digit', day: '2-digit' });

/** A time that may be on another day (a reply due tomorrow): the clock time today, else the date with it. */
export const when = (iso: string | null, now = Date.now()): string => {
  if (!iso) return '–';
  const at = new Date(iso);
  return DAY.format(at) === DAY.format(new Date(now)) ? TIME.format(at) : `${DAY.format(at)} ${TIME.format(at)}`;
};

/** A span in words: "12 s", "3 min", "2 h 5 min", "3 d 4 h" (whole units, rounded down). */
function span(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

/**
 * How long ago `iso` was ("12 s ago") or how soon it is ("in 2 min"), when within the hour; null past it, unless
 * `always` (an age, said however old).
 */
export function relative(iso: string, now = Date.now(), always = false): string | null {
  const seconds = Math.trunc((now - Date.parse(iso)) / 1000);
  const size = Math.abs(seconds);
  if (!always && size >= 3600) return null;
  if (size === 0) return 'now';
  return seconds > 0 ? `${span(size)} ago` : `in ${span(size)}`;
}

/** The bidi embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069): invisible, and they reorder. */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/g;

/**
 * A caller's text quoted inside the server's own (a refusal's message, a task's reason): its bidi controls shown as
 * "<U+202E>", since an override in it would otherwise reverse the server's words after it, to the end of the cell.
 */
export const bidiControlsShown = (text: string): string =>
  text.replace(BIDI_CONTROL, (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase()}>`);
