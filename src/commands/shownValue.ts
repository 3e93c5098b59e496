/**
 * A value a caller sent, shown back in the message that refuses it: as JSON, cut to 60 characters, since a value sent
 * by mistake may be a whole body rather than a word (an error must teach, not echo a megabyte). Cut text keeps its
 * closing quote; a cut list or object ends in "..." alone (`["a","a",..."` read as a string left open).
 */
export function shownValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  if (text.length <= 60) return text;
  return typeof value === 'string' ? `${text.slice(0, 57)}..."` : `${text.slice(0, 57)}...`;
}
