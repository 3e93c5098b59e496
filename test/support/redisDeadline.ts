/**
 * The Redis command deadline of tests whose subject is not the deadline: the mailboxes, stores and CLI processes they
 * start on a real redis-server read and write through it with 10 s instead of the 1 s default (MAILBOX_REDIS_TIMEOUT_MS),
 * so that one command slowed past a second on a loaded CI machine does not fail a test about something else (as
 * redisDanglingListed.int once did, and the contract suites before it). Never a retry: the deadline is only longer.
 * Tests whose subject is the deadline or an outage it bounds (redisOutage, redisRebuildOutage, viewsLaggingRedis,
 * consoleHealth, the failover and lease take-over tests, ...) keep theirs.
 */
import { CONTRACT_TIMEOUT_MS } from '../contract/contractRedisTimeout';

export const REDIS_TEST_TIMEOUT_MS = CONTRACT_TIMEOUT_MS;

/** The same deadline for a `mailbox` CLI process started by a test. */
export const REDIS_TEST_TIMEOUT_ENV = { MAILBOX_REDIS_TIMEOUT_MS: String(REDIS_TEST_TIMEOUT_MS) } as const;
