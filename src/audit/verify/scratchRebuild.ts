/** Feeds the log through the pure projector into a scratch store, up to a chosen position. */
import { projectStored } from '../../projections/projector';
import type { ProjectionStore } from '../../projections/projectionStore';
import { pagesOf, type LogSource } from '../logSource';

/** Applies every event after the scratch store's checkpoint and at or below `upTo`; returns how many. */
export async function rebuildInto(scratch: ProjectionStore, source: LogSource, upTo: bigint | null,
  progress?: (position: bigint) => void): Promise<number> {
  if (upTo === null) return 0;
  let applied = 0;
  for await (const page of pagesOf(source, await scratch.checkpoint())) {
    const within = page[page.length - 1].position <= upTo ? page : page.filter((event) => event.position <= upTo);
    if (within.length > 0) await scratch.applyBatch(within.map(projectStored));
    applied += within.length;
    progress?.(within.length > 0 ? within[within.length - 1].position : upTo);
    if (within.length < page.length) break;
  }
  return applied;
}
