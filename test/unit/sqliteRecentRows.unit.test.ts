/** The SQLite event store's own recent rows: served in runs from a position, bounded in rows and in bytes. */
import { SqliteRecentRows } from '../../src/adapters/eventstore/sqliteRecentRows';
import type { SerializedEvent } from '../../src/adapters/eventstore/sqliteWriter';

const event = (id: string, bodyChars = 10): SerializedEvent => [
  id,
  'MessageSent',
  JSON.stringify({ body: 'b'.repeat(bodyChars) }),
  '{}',
];

describe('SqliteRecentRows', () => {
  it('serves the run of rows after a position, and nothing when the next position is not held', () => {
    const rows = new SqliteRecentRows();
    rows.remember('message-a', 3, 2, [event('e1'), event('e2'), event('e3')]); // positions 1..3, revisions 0..2
    rows.remember('message-b', 4, 0, [event('e4')]);
    expect(rows.after(0, 10).map((row) => [row[0], row[2], row[3]])).toEqual([
      [1, 'message-a', 0],
      [2, 'message-a', 1],
      [3, 'message-a', 2],
      [4, 'message-b', 0],
    ]);
    expect(rows.after(2, 1).map((row) => row[0])).toEqual([3]);
    expect(rows.after(4, 10)).toEqual([]);
    rows.remember('message-c', 10, 0, [event('e10')]); // another process wrote 5..9: a hole
    expect(rows.after(4, 10)).toEqual([]);
    expect(rows.after(9, 10).map((row) => row[0])).toEqual([10]);
  });

  it('keeps at most 16 MiB of row text: rows of 60 KB bodies are dropped oldest first, long before 8,192 of them', () => {
    const rows = new SqliteRecentRows();
    for (let position = 1; position <= 1_000; position++)
      rows.remember(`m${position}`, position, 0, [event(`e${position}`, 60_000)]);
    const held = rows.size();
    expect(held.bytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(held.rows).toBeLessThan(200);
    expect(rows.after(999, 1).map((row) => row[0])).toEqual([1_000]); // the newest is served
    expect(rows.after(0, 1)).toEqual([]); // the oldest is read from the file
  });

  it('keeps at most 8,192 small rows, the newest', () => {
    const rows = new SqliteRecentRows();
    for (let position = 1; position <= 20_000; position++) rows.remember(`m${position}`, position, 0, [event(`e${position}`)]);
    expect(rows.size().rows).toBe(8_192);
    expect(rows.after(20_000 - 8_192, 8_192)).toHaveLength(8_192);
    expect(rows.after(20_000 - 8_193, 1)).toEqual([]);
  });
});
