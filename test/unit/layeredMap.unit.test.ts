import { foldMessage, initialMessageState, type MessageState } from '../../src/commands/message';
import type { MessageEvent } from '../../src/events/types';
import { LayeredMap } from '../../src/commands/layeredMap';
import { prng } from '../contract/projectionStoreLog'; // seeded: a failing sequence is replayed from the seed it names

const view = <K, V>(map: ReadonlyMap<K, V>) => ({
  entries: [...map],
  keys: [...map.keys()],
  values: [...map.values()],
  size: map.size,
});

describe('LayeredMap', () => {
  it.each([1, 2, 3, 4, 5])('answers as a Map fed the same sets, and every earlier copy stays as it was (seed %i)', (seed) => {
    const next = prng(seed);
    let layered = LayeredMap.empty<string, number>();
    const plain = new Map<string, number>();
    const earlier: Array<[LayeredMap<string, number>, ReturnType<typeof view<string, number>>]> = [];
    for (let step = 0; step < 600; step++) {
      const changes = new Map<string, number>();
      // Mostly changes of keys already there (receipts), some new keys (deliveries), batches of 1 to 4.
      for (let n = 1 + Math.floor(next() * 4); n > 0; n--) {
        const key = next() < 0.8 && plain.size > 0 ? `@a${Math.floor(next() * plain.size)}` : `@a${plain.size + changes.size}`;
        changes.set(key, step);
      }
      layered = layered.with(changes);
      for (const [key, value] of changes) plain.set(key, value);
      if (step % 50 === 0) earlier.push([layered, view(plain)]);
      // A string compare each step (a deep toEqual of every step took seconds); the seed and step name a failure.
      const [got, want] = [JSON.stringify(view(layered)), JSON.stringify(view(plain))];
      if (got !== want) expect({ seed, step, got }).toEqual({ seed, step, got: want });
    }
    for (const key of [...plain.keys(), '@never']) {
      expect(layered.get(key)).toBe(plain.get(key));
      expect(layered.has(key)).toBe(plain.has(key));
    }
    for (const [copy, seen] of earlier) expect(view(copy)).toEqual(seen);
  });

  it('returns itself for no change, and forEach visits in insertion order with the map as third argument', () => {
    const map = LayeredMap.of([
      ['@b', 1],
      ['@c', 2],
    ]);
    expect(map.with(new Map())).toBe(map);
    const changed = map.with(new Map([['@b', 3]]));
    const visited: Array<[string, number, boolean]> = [];
    changed.forEach((value, key, self) => visited.push([key, value, self === changed]));
    expect(visited).toEqual([
      ['@b', 3, true],
      ['@c', 2, true],
    ]);
    expect([...map]).toEqual([
      ['@b', 1],
      ['@c', 2],
    ]);
  });
});

describe('foldMessage over a broadcast read by each recipient', () => {
  const AUDIENCE = 2_000;
  const recipients = Array.from({ length: AUDIENCE }, (_unused, i) => `@agent-${i}`);
  const sent = {
    type: 'MessageSent',
    data: { messageId: 'm1', from: '@boss', to: 'AGENT:*', recipients: [], subject: 'all hands' },
  } as unknown as MessageEvent;
  const delivered = recipients.map(
    (recipient) => ({ type: 'BroadcastDelivered', data: { messageId: 'm1', recipient } }) as unknown as MessageEvent,
  );
  const read = (reader: string, readAt: string) =>
    ({ type: 'ReceiptRead', data: { messageId: 'm1', reader, readAt } }) as unknown as MessageEvent;

  it('keeps every recipient in delivery order with its own read time, one receipt at a time', () => {
    let state: MessageState = foldMessage(initialMessageState(), [sent, ...delivered]);
    const states: MessageState[] = [state];
    recipients.forEach((reader, i) => {
      state = foldMessage(state, [read(reader, `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`)]);
      if (i % 500 === 0) states.push(state);
    });
    expect(state.recipients.size).toBe(AUDIENCE);
    expect([...state.recipients.keys()]).toEqual(recipients);
    expect(
      recipients.every((r, i) => state.recipients.get(r)?.readAt === `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`),
    ).toBe(true);
    // A state folded earlier is not changed by the receipts after it.
    expect([...states[0].recipients.values()].every((r) => r.readAt === null)).toBe(true);
    expect([...states[1].recipients.values()].filter((r) => r.readAt !== null)).toHaveLength(1);
  });
});
