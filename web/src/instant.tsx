/**
 * An instant as an operator reads it: local time, short (the date only when not today), how long ago or how soon when
 * it is within the hour; the exact instant stays on the element (its `datetime` and its tooltip: local to the
 * millisecond with the zone, then the UTC ISO the server wrote). A relative part says how long ago *now*: it follows
 * the clock (one shared tick a second), or a row drawn once would keep saying "5 s ago" for ever.
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { relative, when } from './format';

const EXACT = new Intl.DateTimeFormat([], {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
  hour12: false,
  timeZoneName: 'short',
});

/** The tooltip: the instant to the millisecond, local with its zone, and as the server wrote it (UTC). */
export const exact = (iso: string): string => `${EXACT.format(new Date(iso))} (${iso})`;

/** One timer for every instant on the page: each listener is told the time; it re-renders only if its text changed. */
const listeners = new Set<(now: number) => void>();
let ticker: ReturnType<typeof setInterval> | null = null;
function onTick(listener: (now: number) => void): () => void {
  listeners.add(listener);
  ticker ??= setInterval(() => {
    const now = Date.now();
    for (const each of listeners) each(now);
  }, 1000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && ticker !== null) {
      clearInterval(ticker);
      ticker = null;
    }
  };
}

/**
 * How the instant reads:
 * - 'both': "19:24:03 (12 s ago)", "19:26:02 (in 2 min)"; the time alone past the hour (in a sentence: "woken at ...").
 * - 'compact': "12 s ago" within the hour, else the time (a table cell).
 * - 'age': always how long ago, "3 min ago", "2 h 5 min ago", "3 d 4 h ago" (an age: the oldest unread).
 * - 'time': the time alone (a narrow column whose row says when in words elsewhere); it does not change with the clock.
 */
export type InstantStyle = 'both' | 'compact' | 'age' | 'time';

export function instantText(iso: string, style: InstantStyle, now: number): string {
  if (style === 'time') return when(iso, now);
  const near = relative(iso, now, style === 'age');
  if (style === 'age') return near!;
  if (near === null) return when(iso, now);
  return style === 'compact' ? near : `${when(iso, now)} (${near})`;
}

export function Instant({ iso, style = 'both' }: { iso: string | null; style?: InstantStyle }) {
  const [text, setText] = useState(() => (iso ? instantText(iso, style, Date.now()) : '–'));
  useEffect(() => {
    if (!iso) return setText('–');
    setText(instantText(iso, style, Date.now()));
    if (style === 'time') return;
    return onTick((now) => setText(instantText(iso, style, now)));
  }, [iso, style]);
  if (!iso) return <>–</>;
  return (
    <time dateTime={iso} title={exact(iso)}>
      {text}
    </time>
  );
}

/** Exact UTC instants as the server writes them in a sentence ("woken via stream at 2026-12-03T18:20:11.123Z"). */
const ISO_INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z/g;

/** `text` with each exact instant in it read as an Instant ('both'): the sentence stays, the ISO goes to the tooltip. */
export function WithInstants({ text }: { text: string }) {
  const parts: Array<string | JSX.Element> = [];
  let last = 0;
  for (const match of text.matchAll(ISO_INSTANT)) {
    if (Number.isNaN(Date.parse(match[0]))) continue;
    parts.push(text.slice(last, match.index));
    parts.push(<Instant key={match.index} iso={match[0]} />);
    last = match.index + match[0].length;
  }
  if (last === 0) return <>{text}</>;
  parts.push(text.slice(last));
  return <>{parts}</>;
}
