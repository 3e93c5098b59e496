/**
 * A projector process for the SIGKILL test: the real ProjectionRunner feeding a
 * SQLite log (argv[2]) into Redis (argv[3], namespace argv[4]). It prints one
 * JSON line per applied batch and one when caught up, then keeps following
 * until it is killed. With argv[5] = N it SIGKILLs itself in the middle of its
 * N-th batch: the first half of the batch committed, the rest never sent.
 * Run with `node -r test/support/tsRequireHook.js`.
 */
import pino from 'pino';
import { SqliteEventStore } from '../../src/adapters/eventstore/sqliteEventStore';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { RedisProjectionStore } from '../../src/adapters/projections/redisProjectionStore';
import { ProjectionRunner } from '../../src/projections/projectionRunner';
import type { ProjectedEvent } from '../../src/projections/viewChanges';
import { CONTRACT_TIMEOUT_MS } from '../contract/contractRedisTimeout';

const emit = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const [file, url, namespace, killInBatch] = process.argv.slice(2);
  const log = SqliteEventStore.open(file);
  const store = new RedisProjectionStore(await connectRedis(url, { name: 'projector-process', timeoutMs: CONTRACT_TIMEOUT_MS }), {
    namespace,
  });
  const applyBatch = store.applyBatch.bind(store);
  let batches = 0;
  store.applyBatch = async (batch: readonly ProjectedEvent[]) => {
    if (++batches === Number(killInBatch)) {
      await applyBatch(batch.slice(0, Math.floor(batch.length / 2)));
      process.kill(process.pid, 'SIGKILL');
    }
    await applyBatch(batch);
    emit({ kind: 'applied', last: batch[batch.length - 1].position.toString(), size: batch.length });
  };
  const runner = new ProjectionRunner(log, store, pino({ level: 'silent' }));
  await runner.start();
  emit({ kind: 'caught-up', checkpoint: (await store.checkpoint())?.toString() ?? null });
  setInterval(() => undefined, 1000);
}

main().catch((error) => {
  emit({ kind: 'error', message: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
});
