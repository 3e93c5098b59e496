/** Polls `condition` until it holds (resolves) or `timeoutMs` passes (rejects, naming what was awaited). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 5000, everyMs = 20, what = 'the condition' }: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() >= deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
