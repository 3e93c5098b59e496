/**
 * Bench-only switch (bench/core/rebuild.bench.ts measures the cost of the checks): never set it in production. Set to 1,
 * readEvent.ts does not check the events it reads against their stored shapes. The CLI warns when it is set
 * (envWarnings.ts), at every start: its name is here, alone, so that the warning does not load the stored shapes.
 */
export const SKIP_EVENT_CHECKS_VARIABLE = 'MAILBOX_BENCH_SKIP_EVENT_CHECKS';
