import { FETCH_BLOCKED_PORTS } from '../../src/support/fetchBlockedPorts';

/** What this Node's fetch says of a port on loopback: 'bad port' when it refuses it without connecting. */
async function fetchRefusal(port: number): Promise<string | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
    await response.body?.cancel();
    return undefined;
  } catch (error) {
    return (error as { cause?: Error }).cause?.message;
  }
}

test("every port of the list is one this Node's fetch refuses ('bad port'), and the mailbox's own are not", async () => {
  const refusals = await Promise.all([...FETCH_BLOCKED_PORTS].map(fetchRefusal));
  expect(refusals.filter((refusal) => refusal !== 'bad port')).toEqual([]);
  for (const port of [7420, 7421, 6379, 2113, 8080]) {
    expect(FETCH_BLOCKED_PORTS.has(port)).toBe(false);
    expect(await fetchRefusal(port)).not.toBe('bad port');
  }
});
