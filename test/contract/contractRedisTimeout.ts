/**
 * The Redis command deadline of the contract suites and the read model's differential test. They are about what the
 * views hold, not about the Redis deadline (test/e2e/redisOutage, redisRebuildOutage and others test that one): with
 * the 1 s default, one script of a 3,000-event apply on a machine loaded by other suites missed it ('Command timed
 * out') and failed a case about list filters, and the differential once failed seed 5 so (2 cores at load 13).
 * Its own module: the differential is built into bench/ (no jest there), the harness is not.
 */
export const CONTRACT_TIMEOUT_MS = 10_000;
