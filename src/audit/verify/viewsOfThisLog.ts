/**
 * `audit verify` diffs the views against a rebuild from the log. Views of another log (or ahead of this log's head:
 * the log was replaced or lost events) differ everywhere, and were reported as drift, view by view, as if this log's
 * views had gone wrong; the remedy is not a repair but what the server says when it refuses them at start. So whose
 * views they are is judged first, as the server does (projections/viewsOwnership.ts), and such views are not diffed.
 */
import type { EventStore } from '../../events/eventStore';
import type { ProjectionStore, ViewsBinding } from '../../projections/projectionStore';
import { foreignViewsRemedy, judgeViews, whoseViews, type ViewsVerdict } from '../../projections/viewsOwnership';

/** The views are not this log's: verify compared nothing. */
export class ViewsNotOfThisLog extends Error {
  constructor(
    readonly binding: ViewsBinding,
    readonly logIdentity: string,
    readonly verdict: ViewsVerdict,
  ) {
    super(
      `${whoseViews(binding, logIdentity, verdict)}: not verified (compared with this log, every view would differ; ` +
        `that is not drift). ${foreignViewsRemedy(binding)}`,
    );
    this.name = 'ViewsNotOfThisLog';
  }

  /** Where the views are and whose, for the error envelope. */
  get details(): Record<string, unknown> {
    return { location: this.binding.location, viewsOf: this.binding.logIdentity, logIdentity: this.logIdentity };
  }
}

/**
 * Throws ViewsNotOfThisLog for views of another log or ahead of its head; this log's views pass ('own'), and so do
 * views of no log that hold nothing ('unclaimed': none built yet, which the caller refuses as no views).
 */
export async function requireViewsOfThisLog(log: EventStore, views: ProjectionStore): Promise<'own' | 'unclaimed'> {
  const binding = await views.binding();
  const head = await log.headPosition(); // after the binding: the head only grows (judgeViews)
  const logIdentity = await log.logIdentity();
  const verdict = judgeViews(logIdentity, head, binding);
  if (verdict.kind === 'foreign' || verdict.kind === 'ahead') throw new ViewsNotOfThisLog(binding, logIdentity, verdict);
  return verdict.kind;
}
