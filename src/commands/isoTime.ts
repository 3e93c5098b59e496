/**
 * Times in the log are whole milliseconds (Date#toISOString), while a time input may be finer: ISO 8601 allows any
 * number of fraction digits, and the inputs accept them (z.iso.datetime). Date.parse keeps three and drops the
 * rest, so comparing its result with a logged time is wrong by up to a millisecond: `before: …00.000999Z` read as
 * …00.000Z and left out a message sent at …00.000Z, which was sent before it.
 */

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
