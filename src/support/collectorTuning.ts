/**
 * How the mailbox's processes set V8's collector: allocation-site pretenuring off.
 *
 * Why: V8 allocates an object directly in the old generation when most objects made at the same place in the code
 * survived the young generation's last collections. The projector and the views apply events a page at a time:
 * every event of a page is alive until its page is applied, so a young collection in the middle of a page finds all
 * of them alive, and V8 decides, early and for good, that the places making events, facts and rows make long-lived
 * objects. From then on that garbage is made in the old generation and only a full (mark-compact) collection frees
 * it: a catch-up of 1,000,000 events into the memory views found about half of the old generation dead at each
 * full collection, and spent about a quarter more time than with the decision left out (measured with the CLI's
 * start path and by bench/core/rebuild; figures in docs/operators.md). Without it, long-lived objects (the views
 * themselves) are copied once more on their way to the old generation, which costs less here.
 *
 * Set from the process's entry (the CLI) before any work; V8 reads the flag at each decision. A library user of
 * createMailbox keeps its own process's settings.
 */
import v8 from 'node:v8';

const COLLECTOR_FLAGS = ['--no-allocation-site-pretenuring'] as const;

export function tuneCollector(): void {
  for (const flag of COLLECTOR_FLAGS) v8.setFlagsFromString(flag);
}
