/** Near-match hints (DESIGN section 2, layer 3): suggest, never substitute. */

const MAX_SUGGESTIONS = 3;

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and a swap of two adjacent letters each
 * cost 1 (`alcie` is one edit from `alice`, as a typist makes it, not two). Every near-match hint measures with it.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        current[j] = Math.min(current[j], beforePrevious[j - 2] + 1);
      }
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length];
}

/** 'AGENT:gpt' -> 'gpt', '@Neo-GPT' -> 'neo-gpt': compare the name part only. */
const namePart = (value: string): string =>
  value
    .replace(/^(AGENT:|@)/i, '')
    .trim()
    .toLowerCase();

/**
 * Registered identities close to `input`: small edit distance on the name, or
 * the input names one whole dash/underscore-separated segment of an identity
 * (`AGENT:gpt` -> `@neo-gpt`).
 */
export function closestIdentities(input: string, known: readonly string[]): string[] {
  const wanted = namePart(input);
  if (!wanted || wanted === '*') return [];
  const budget = Math.max(1, Math.min(3, Math.floor(wanted.length / 3)));
  const scored: Array<{ identity: string; score: number }> = [];
  for (const identity of known) {
    const name = namePart(identity);
    if (name === wanted && identity === input) continue;
    const distance = editDistance(wanted, name);
    const segmentMatch = name.split(/[-_]/).includes(wanted);
    if (distance <= budget || segmentMatch) scored.push({ identity, score: segmentMatch ? Math.min(distance, 1) : distance });
  }
  scored.sort((a, b) => a.score - b.score || a.identity.localeCompare(b.identity));
  return scored.slice(0, MAX_SUGGESTIONS).map((s) => s.identity);
}
