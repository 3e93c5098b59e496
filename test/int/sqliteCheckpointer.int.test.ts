/**
 * Background WAL checkpoints: pages committed to the WAL reach the database
 * file without the writer checkpointing (its own threshold is far off), the
 * data stays intact, and close() stops the worker thread.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { contractEvent, freshStream } from '../contract/eventStore.contract';
import { tempDir } from '../support/fixtures';

const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

it('copies committed pages into the database file in the background; close() ends the worker', async () => {
  const dir = tempDir('mailbox-checkpoint-');
  const file = path.join(dir, 'events.sqlite');
  const store = SqliteEventStore.open(file);
  try {
    const sizeBefore = sizeOf(file);
    const streams = Array.from({ length: 200 }, () => freshStream());
    // One commit each (the worker starts once a store has committed 100 times).
    for (const [i, stream] of streams.entries()) await store.append(stream, [contractEvent(`e${i}`)], 'no_stream');
    expect(sizeOf(`${file}-wal`)).toBeGreaterThan(0); // committed to the WAL
    // ~600 WAL frames, below the writer's own 1,000-page threshold: only the background checkpointer moves them.
    expect(await waitFor(() => sizeOf(file) > sizeBefore + 20 * 4096, 5000)).toBe(true);
    expect((await store.readStream(streams[123])).map((e) => (e.data as { identity: string }).identity)).toEqual(['@e123']);
  } finally {
    await store.close();
  }
  const reopened = SqliteEventStore.open(file);
  try {
    expect((await reopened.readAll(null, 1000)).length).toBe(200);
  } finally {
    await reopened.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
