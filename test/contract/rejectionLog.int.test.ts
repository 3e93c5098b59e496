/** The rejection log contract on both adapters: the ring buffer, and a capped stream on a real redis-server. */
import pino from 'pino';
import { MemoryRejectionLog } from '../../src/adapters/rejections/memoryRejectionLog';
import { RedisRejectionLog } from '../../src/adapters/rejections/redisRejectionLog';
import { connectRedis } from '../../src/adapters/projections/redisConnection';
import { startRedis, type TestRedis } from '../support/redisServer';
import { describeRejectionLogContract, rejection } from './rejectionLog.contract';
import { CONTRACT_TIMEOUT_MS } from './contractRedisTimeout';

let redis: TestRedis;
let namespaces = 0;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

const silent = pino({ level: 'silent' });
const openRedis = async (capacity: number, namespace = `rej${process.pid}n${++namespaces}`) =>
  new RedisRejectionLog(
    await connectRedis(redis.url, { name: 'rejections-test', timeoutMs: CONTRACT_TIMEOUT_MS }),
    namespace,
    capacity,
    silent,
  );

describeRejectionLogContract('memory (ring buffer)', async (capacity) => new MemoryRejectionLog(capacity));
describeRejectionLogContract('redis (capped stream)', (capacity) => openRedis(capacity));

test('redis: API nodes on one namespace share the record (one node records, another reads)', async () => {
  const namespace = `shared${process.pid}`;
  const [first, second] = [await openRedis(10, namespace), await openRedis(10, namespace)];
  try {
    first.record(rejection(1, '@on-node-one'));
    await first.recent(1); // the write is in once this read on the same connection answers
    await expect(second.recent(10)).resolves.toEqual([rejection(1, '@on-node-one')]);
  } finally {
    await first.close();
    await second.close();
  }
});
