/**
 * A server that a file's concurrent tests share (a Redis, an EventStoreDB double, a prepared log), started by the first
 * test that asks for it and stopped after the block it was made in. A describe block's beforeAll is no place for it:
 * jest starts every test.concurrent of a file once the file's top-level beforeAll hooks are done, before any nested
 * block's own.
 */
export function startedOnce<T>(start: () => Promise<T>, stop: (value: T) => unknown = () => {}): () => Promise<T> {
  let started: Promise<T> | undefined;
  afterAll(async () => {
    if (started === undefined) return;
    const value = await started.catch(() => undefined);
    if (value !== undefined) await stop(value);
  });
  return () => (started ??= start());
}
