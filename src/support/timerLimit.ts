/**
 * The longest delay a Node timer takes: 2^31 - 1 ms (about 24.8 days). A longer one is not clamped to it but
 * replaced with 1 ms (TimeoutOverflowWarning), so a setting meant as "practically never" would fire at once and
 * then on every turn of the loop. Settings that become a timer's delay are refused beyond it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** The limit in words, for the error that teaches the valid form. */
export const MAX_TIMER_TEXT = `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node.js keeps)`;
