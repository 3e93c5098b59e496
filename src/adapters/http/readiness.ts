/**
 * Readiness: the event store answers, the projection store (Redis when
 * configured) answers, the projection runner is following the log, the views
 * are this log's (never another's: see projections/viewsOwnership.ts) and not
 * far behind it. Each check is bounded in time.
 */
import { refusedStreams, type MailboxServices } from '../../application/mailboxServices';
import type { StreamRefusal } from '../../application/refusedStreams';
import { isMailboxError, needsOperator } from '../../errors';
import { viewsLag } from '../../application/viewsLag';
import type { Leadership } from '../../projections/projectorLease';
import { nodeIdOf } from '../../config';
import type { RulesRebuild, RulesUnknown } from '../../projections/projectionRunner';

/** Views this far behind the log are not serving fresh reads; take the node out of rotation. */
export const MAX_READY_LAG = 10_000;
const CHECK_TIMEOUT_MS = 2000;
/** Refused streams /readyz lists, at most (the oldest first; each seen stream of a deleted log would be one). */
const REFUSALS_LISTED = 20;

export interface Readiness {
  /** False: 503, take the node out of rotation. */
  ready: boolean;
  /**
   * 'degraded': serving, but a command's views lagged behind its write and have not caught up yet, the projector
   * failed and waits to try again (projections.retryingBy), or is stopped at a stored event it cannot read
   * (projections.lastError names it; /metrics mailbox_projector_stopped_at_unreadable_event), or commands' writes are
   * failing (eventStore.writes: a full disk, say) while reads are served, or a stream the seen marks or the delivery
   * ledger write to is refused for what only an operator mends (eventStore.refusedStreams). Any other lastError alone
   * does not degrade it: one left from an outage the views have since caught up from kept a healthy node 'degraded'.
   */
  status: 'ready' | 'degraded' | 'not ready';
  checks: {
    eventStore: {
      ok: boolean;
      head?: string | null;
      error?: string;
      /** Present when the store refused the head's read for a reason no retry mends (a right the user lacks): the remedy. */
      operatorAction?: string;
      writes?: { failing: string; since: string };
      /**
       * Present when the store refuses streams the background writers (the seen marks, the delivery ledger's observed
       * wakes) write to, for what only an operator mends (EventStoreDB: deleted under the mailbox): their items are kept
       * (up to a bound) and nothing is written there; the node serves. `count` of them; the first REFUSALS_LISTED listed.
       */
      refusedStreams?: { count: number; streams: StreamRefusal[] };
    };
    projectionStore: { ok: boolean; backend: 'memory' | 'sqlite' | 'redis'; checkpoint?: string | null; error?: string };
    projections: {
      ok: boolean;
      running: boolean;
      /** Events in the log the views do not hold yet (null: unknown, a store did not answer). */
      lag: number | null;
      /** Present when the count stopped at LAG_COUNTED_UP_TO (EventStoreDB, read to count): `lag` or more events behind. */
      lagAtLeast?: true;
      /** The failure the projector is in now, and when it last met it; null once it applies again. */
      lastError: string | null;
      lastErrorAt: string | null;
      lagging: { position: string; since: string } | null;
      /** After a failure, when the projector tries again at the latest; null when no retry is pending. */
      retryingBy: string | null;
      /** 'own' unless the views belong to another log (never served then: 503, with the reason). */
      views: 'unchecked' | 'own' | 'foreign';
      logIdentity: string | null;
      viewsProblem?: string;
      /**
       * Who projects: 'alone' (embedded views: this process, named by its node id as in /metrics), or the projector
       * lease's holder (this node 'leading', or another).
       */
      leadership: Exclude<Leadership, { role: 'alone' }> | { role: 'alone'; node: string };
      /**
       * Only while this node rebuilds views built by other rules (an upgrade over Redis views): the views served answer
       * by the earlier rules meanwhile, so the node stays ready.
       */
      rulesRebuild?: RulesRebuild;
      /**
       * Only while the look at which rules built the views fails (the store did not answer it): taken again with
       * backoff; the views serve meanwhile, as they are, so the node stays ready.
       */
      rulesUnknown?: RulesUnknown;
    };
  };
}

async function within<T>(what: string, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([run(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A refusal only an operator mends (EventStoreDB refusing the user reading $all): its remedy, for /readyz to name. */
const operatorActionOf = (error: unknown): { operatorAction?: string } =>
  isMailboxError(error) && needsOperator(error) ? { operatorAction: String(error.envelope.operatorAction) } : {};

export async function checkReadiness(mailbox: MailboxServices): Promise<Readiness> {
  const readHead = () => within('event store', () => mailbox.eventStore.headPosition());
  const [firstHead, checkpoint, refused] = await Promise.allSettled([
    readHead(),
    within('projection store', () => mailbox.projections.checkpoint()),
    // Looked at here, not left to the projector's next look: reads are refused from the moment the views are lost.
    within('projection store', async () => (await mailbox.projections.readsRefused?.()) ?? null),
  ]);
  const readsRefused = refused.status === 'fulfilled' ? refused.value : null; // unanswered: the checkpoint's look says
  let head = firstHead;
  // Read side by side, the head may be older than the checkpoint (an append and its apply landed in between): a
  // lag below zero would claim views ahead of the log. Read once more after the checkpoint: the head only grows.
  if (head.status === 'fulfilled' && checkpoint.status === 'fulfilled' && (checkpoint.value ?? 0n) > (head.value ?? 0n))
    [head] = await Promise.allSettled([readHead()]);
  const status = mailbox.runner.getStatus();
  const failure = mailbox.commands.writeFailure();
  // Reads answer while writes fail (a full disk): the store is up for reads, and the failing writes are said.
  const writes = failure === null ? {} : { writes: { failing: failure.message, since: failure.since } };
  // The node serves, and an operator polling /readyz sees what only they mend: it was said in the log alone.
  const refusedWrites = refusedStreams(mailbox);
  const refusals =
    refusedWrites.length === 0
      ? {}
      : { refusedStreams: { count: refusedWrites.length, streams: refusedWrites.slice(0, REFUSALS_LISTED) } };
  const eventStore =
    head.status === 'fulfilled'
      ? { ok: true, head: head.value?.toString() ?? null, ...writes, ...refusals }
      : { ok: false, error: message(head.reason), ...operatorActionOf(head.reason), ...writes, ...refusals };
  const backend = mailbox.projections.backend; // the store the mailbox runs on, not a guess from the config
  const damage = mailbox.projections.damage?.() ?? null;
  const projectionStore =
    checkpoint.status !== 'fulfilled'
      ? { ok: false, backend, error: message(checkpoint.reason) }
      : damage !== null
        ? { ok: false, backend, checkpoint: checkpoint.value?.toString() ?? null, error: damage }
        : { ok: true, backend, checkpoint: checkpoint.value?.toString() ?? null };
  // In events, not positions (EventStoreDB's are byte offsets): application/viewsLag.ts.
  const counted =
    head.status === 'fulfilled' && checkpoint.status === 'fulfilled'
      ? await within('event store', () => viewsLag(mailbox.eventStore, head.value, checkpoint.value)).catch(() => null)
      : null;
  const lag = counted?.events ?? null;
  const viewsProblem = status.viewsProblem ?? readsRefused;
  // Another log's, as soon as a look of the store (this probe's, or a read's) found it: the projector's own look comes
  // each second, and meanwhile /readyz answered 503 "Not ready" with Retry-After, as for an outage a retry mends.
  const views = status.views === 'own' && mailbox.projections.viewsOfAnotherLog?.() ? 'foreign' : status.views;
  const projections = {
    // Views rebuilt in place after a loss are refused to every read until whole again: not ready meanwhile.
    ok:
      status.running &&
      views === 'own' &&
      status.rebuildingLostViews === null &&
      readsRefused === null &&
      lag !== null &&
      lag <= MAX_READY_LAG,
    running: status.running,
    lag,
    ...(counted?.atLeast ? { lagAtLeast: true as const } : {}),
    lastError: status.lastError,
    lastErrorAt: status.lastErrorAt,
    lagging: status.lagging,
    retryingBy: status.retryingBy,
    views,
    logIdentity: status.logIdentity,
    ...(viewsProblem ? { viewsProblem } : {}),
    leadership:
      status.leadership.role === 'alone' ? { role: 'alone' as const, node: nodeIdOf(mailbox.config) } : status.leadership,
    ...(status.rulesRebuild ? { rulesRebuild: status.rulesRebuild } : {}),
    ...(status.rulesUnknown ? { rulesUnknown: status.rulesUnknown } : {}),
  };
  const ready = eventStore.ok && projectionStore.ok && projections.ok;
  return {
    ready,
    status: !ready
      ? 'not ready'
      : status.lagging || status.retryingBy || Boolean(status.stoppedAtUnreadable) || failure !== null || refusedWrites.length > 0
        ? 'degraded'
        : 'ready',
    checks: { eventStore, projectionStore, projections },
  };
}
