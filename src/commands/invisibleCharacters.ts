/**
 * Characters that show nothing, in one place. A label (a thread id, a tag) refuses the invisible formatting
 * characters, which make two equal-looking labels differ or reorder what is shown (printableText.ts); text that must
 * say something counts every invisible character as it counts whitespace (readableText.ts), the joiners and the soft
 * hyphen too, which belong inside a word or an emoji but alone show nothing. Written as character class bodies of
 * escapes, so that a JSON Schema `pattern` built from them stays ASCII (and short: tools/list is read every session).
 */

/** Bidi controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), U+200B zero-width space, U+2060 word joiner, U+FEFF byte order mark. */
export const INVISIBLE_FORMATTING = '\\u061c\\u200b\\u200e\\u200f\\u202a-\\u202e\\u2060\\u2066-\\u2069\\ufeff';

/**
 * Every invisible character: those above, and U+00AD soft hyphen, U+180E Mongolian vowel separator, U+200C and
 * U+200D zero-width non-joiner and joiner, U+2061-U+2064 invisible operators (U+2065 is unassigned).
 */
export const INVISIBLE = '\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2069\\ufeff';
