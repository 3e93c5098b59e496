/**
 * A value a caller sent, shown back in the message that refuses it: as JSON, cut to 60 characters, since a value sent
 * by mistake may be a whole body rather than a word (an error must teach, not echo a megabyte).
 */
export function shownValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
}
