/** Feeds the log through the pure projector and the read model into scratch views, up to a chosen position. */
import { projectStored } from '../../projections/projector';
import { pagesOf, type LogSource } from '../logSource';
import type { ScratchViews } from '../../projections/readModel/scratchViews';

/** Applies every event after the views' checkpoint and at or below `upTo`; returns how many. */
export async function rebuildInto(
  views: ScratchViews,
  source: LogSource,
  upTo: bigint | null,
  progress?: (position: bigint) => void,
): Promise<number> {
  if (upTo === null) return 0;
  let applied = 0;
  for await (const page of pagesOf(source, views.checkpoint)) {
    const within = page[page.length - 1].position <= upTo ? page : page.filter((event) => event.position <= upTo);
    if (within.length > 0) views.applyBatch(within.map(projectStored));
    applied += within.length;
    progress?.(within.length > 0 ? within[within.length - 1].position : upTo);
    if (within.length < page.length) break;
  }
  return applied;
}
