/**
 * Whose views are these? A projection store records the log its views were
 * built from with their checkpoint; views of another log, or a checkpoint
 * ahead of this log's head (a replaced or truncated log), are never served or
 * written. The verdict is pure; the runner and the rebuild act on it.
 */
import type { ViewsBinding } from './projectionStore';

export type ViewsVerdict =
  | { kind: 'own' }
  /** No log and no checkpoint: empty views, free to claim. */
  | { kind: 'unclaimed' }
  /** Another log's views (owner null: views written before logs had identities). */
  | { kind: 'foreign'; owner: string | null }
  | { kind: 'ahead'; checkpoint: bigint; head: bigint | null };

/** `head` must be read after `binding` (the head only grows, so an own checkpoint is then never above it). */
export function judgeViews(logIdentity: string, head: bigint | null, binding: ViewsBinding): ViewsVerdict {
  if (binding.logIdentity === null) return binding.checkpoint === null ? { kind: 'unclaimed' } : { kind: 'foreign', owner: null };
  if (binding.logIdentity !== logIdentity) return { kind: 'foreign', owner: binding.logIdentity };
  if (binding.checkpoint !== null && (head === null || binding.checkpoint > head)) {
    return { kind: 'ahead', checkpoint: binding.checkpoint, head };
  }
  return { kind: 'own' };
}

const TAKE_OVER =
  'take it over (rebuilds the views from this log into a fresh generation, once no projector of the other log is live): ' +
  '`mailbox projections rebuild --take-over`, or start with MAILBOX_PROJECTIONS_ON_FOREIGN=take-over';

/** Which views, and whose (or how far ahead of this log): the first part of every refusal of views not this log's. */
export function whoseViews(binding: ViewsBinding, logIdentity: string, verdict: ViewsVerdict): string {
  return verdict.kind === 'ahead'
    ? `The views in ${binding.location} stand at log position ${verdict.checkpoint}, ahead of this event log's head ` +
        `(${verdict.head ?? 'empty'}; log ${logIdentity}): the log was replaced or lost events`
    : `The views in ${binding.location} belong to ${
        verdict.kind === 'foreign' && verdict.owner !== null
          ? `another event log (${verdict.owner})`
          : 'an event log of unknown identity (written before logs had identities)'
      }, ` + `not to this one (${logIdentity})`;
}

/**
 * This log's own views standing ahead of its head, as said when they are replaced (`mailbox projections rebuild
 * --take-over`, or a start with take-over): where they stand and the head. They are replaced, never "taken over from"
 * a log: the log they belong to is this one.
 */
export function aheadOfThisLog(ahead: { checkpoint: bigint; head: bigint | null }, logIdentity: string): string {
  return `at log position ${ahead.checkpoint}, ahead of the head (${ahead.head ?? 'empty'}) of this log (${logIdentity})`;
}

/** The two remedies, as a sentence: views elsewhere for this mailbox, or a take-over. */
export function foreignViewsRemedy(binding: ViewsBinding): string {
  const elsewhere = binding.elsewhere ?? 'use another MAILBOX_REDIS_NAMESPACE for this mailbox';
  return `${elsewhere[0].toUpperCase()}${elsewhere.slice(1)}, or ${TAKE_OVER}.`;
}

/**
 * The remedy of views not this log's, short (an error's operatorAction): no retry mends them, an operator acts. Views
 * ahead of this log's head are replaced by a take-over only (another namespace would leave this log's own behind).
 */
export function foreignViewsAction(binding: ViewsBinding, verdict: ViewsVerdict): string {
  if (verdict.kind === 'ahead') return 'mailbox projections rebuild --take-over (rebuilds the views from this log)';
  return `mailbox projections rebuild --take-over, or ${binding.elsewhere ?? 'another MAILBOX_REDIS_NAMESPACE for this mailbox'}`;
}

/** One line: which views, whose, and the two remedies. */
export function describeForeignViews(binding: ViewsBinding, logIdentity: string, verdict: ViewsVerdict): string {
  return `${whoseViews(binding, logIdentity, verdict)}; refusing to serve or overwrite them. ${foreignViewsRemedy(binding)}`;
}

/** The views are not this log's: nothing was written. */
export class ForeignViews extends Error {
  constructor(
    readonly binding: ViewsBinding,
    readonly logIdentity: string,
    readonly verdict: ViewsVerdict,
  ) {
    super(describeForeignViews(binding, logIdentity, verdict));
    this.name = 'ForeignViews';
  }
}
