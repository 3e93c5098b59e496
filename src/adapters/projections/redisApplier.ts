/**
 * Runs the apply script over a batch of events: chunks of events per call,
 * pipelined on a single node; one call per hash tag then the global commit in
 * Cluster layout. Stops at the first call that reports a stale generation or a
 * rewound checkpoint and says how many events were committed before it.
 */
import type { ProjectedEvent } from '../../projections/viewChanges';
import { checkCall, inLogOrder, perTagCalls, planEvents, singleCall, type CallContext, type ScriptCall } from './redisApplyPlan';
import { translateRedisError, type RedisClient } from './redisConnection';
import { padPosition, parsePosition, type RedisKeys } from './redisKeys';
import type { ApplyReply } from './redisScripts';
import type { TaskOps } from './redisTaskViews';

export interface ApplierOptions {
  /** One script call per hash tag (Redis Cluster) instead of one per chunk of events. */
  scriptPerTag: boolean;
  /** Events per script call: larger amortises the call, smaller keeps each script short. */
  eventsPerScript: number;
}

export type ApplyOutcome =
  | { status: 'ok'; checkpoint: string }
  | { status: 'stale'; active: string; committed: number }
  | { status: 'fenced'; committed: number }
  /** A newer projector holds the lease (its token `current`): nothing of the call was applied. */
  | { status: 'deposed'; current: string }
  /** `committed`: events of the call's chunks before the refused one that went in (contiguous: they did, then the store lost them). */
  | { status: 'rewound'; stored: string; committed: number }
  /** The generation belongs to another log ('' an unknown one): nothing of the call was applied. */
  | { status: 'foreign'; owner: string };

export class RedisScriptApplier {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: RedisKeys,
    private readonly options: ApplierOptions,
  ) {}

  /** `events` must be in strictly increasing log order (see inLogOrder). */
  /** True when overlapping apply() calls take effect in call order (single node: each issues all its calls at once). */
  get ordersOverlappingCalls(): boolean {
    return !this.options.scriptPerTag;
  }

  /**
   * `expected`: the stored checkpoint must be at least this ('' none) or nothing is applied ('rewound'). With
   * `contiguous` (a generation being built), each chunk after the first also expects the one before it to be in: a
   * chunk refused before it was sent (Redis unreachable) then never leaves a hole behind a later one that was sent.
   */
  async apply(
    events: readonly ProjectedEvent[],
    prefix: string,
    flags: string,
    expected: string,
    logIdentity = '',
    taskOps?: TaskOps,
    fenceToken = '',
    contiguous = false,
  ): Promise<ApplyOutcome> {
    const context: CallContext = { keys: this.keys, prefix, flags, expected, logIdentity, taskOps, fenceToken, contiguous };
    const chunks: ProjectedEvent[][] = [];
    for (let i = 0; i < events.length; i += this.options.eventsPerScript)
      chunks.push(events.slice(i, i + this.options.eventsPerScript));
    try {
      return this.options.scriptPerTag ? await this.applyPerTag(chunks, context) : await this.applySingle(chunks, context);
    } catch (error) {
      throw translateRedisError('Redis projections (apply)', error);
    }
  }

  /**
   * Pipelined: every call is issued before the first wait, so a caller may
   * start the next batch while Redis works through this one, and one
   * connection keeps all calls in order. Every call repeats the checks, so once
   * one reports stale or rewound, so do all after it.
   */
  private async applySingle(chunks: ProjectedEvent[][], context: CallContext): Promise<ApplyOutcome> {
    const replies = chunks.map((chunk, i) => {
      const call = { ...context, expected: expectedBefore(chunks, i, context) };
      const reply = this.run(singleCall(planEvents(chunk, context.flags.includes('p'), context.taskOps), call));
      reply.catch(() => undefined); // awaited in order below
      return reply;
    });
    let checkpoint = '';
    let committed = 0;
    for (let i = 0; i < chunks.length; i++) {
      const outcome = this.outcome(await replies[i], committed);
      if (outcome.status !== 'ok') return outcome;
      checkpoint = outcome.checkpoint;
      committed += chunks[i].length;
    }
    return { status: 'ok', checkpoint };
  }

  private async applyPerTag(chunks: ProjectedEvent[][], context: CallContext): Promise<ApplyOutcome> {
    let checkpoint = '';
    let committed = 0;
    for (const [i, chunk] of chunks.entries()) {
      // 1. Checks first, so that no agent tag is written into a rewound store or a retired generation.
      const checked = this.outcome(
        await this.run(checkCall({ ...context, expected: expectedBefore(chunks, i, context) })),
        committed,
      );
      if (checked.status !== 'ok') return checked;
      const fresh = inLogOrder(chunk, parsePosition(checked.checkpoint));
      if (fresh.length > 0) {
        // 2. Every agent tag on its own (each gated by its own checkpoint), 3. then the global commit.
        const { agents, commit } = perTagCalls(planEvents(fresh, context.flags.includes('p'), context.taskOps), context);
        await Promise.all(agents.map((call) => this.run(call)));
        const committedChunk = this.outcome(await this.run(commit), committed);
        if (committedChunk.status !== 'ok') return committedChunk;
        checkpoint = committedChunk.checkpoint;
      } else {
        checkpoint = checked.checkpoint;
      }
      committed += chunk.length;
    }
    return { status: 'ok', checkpoint };
  }

  private run(call: ScriptCall): Promise<ApplyReply> {
    return this.client.mailboxApply(call.keys.length, ...call.keys, ...call.args);
  }

  private outcome(reply: ApplyReply, committed: number): ApplyOutcome {
    const [status, value] = reply;
    if (status === 'ok') return { status, checkpoint: value };
    if (status === 'stale') return { status, active: value, committed };
    if (status === 'fenced') return { status, committed };
    if (status === 'foreign') return { status, owner: value };
    if (status === 'deposed') return { status, current: value };
    return { status: 'rewound', stored: value, committed };
  }
}

/** The checkpoint chunk `i` expects: the call's own, or (contiguous) the last position of the chunk before it. */
function expectedBefore(chunks: readonly ProjectedEvent[][], i: number, context: CallContext): string {
  if (i === 0 || !context.contiguous) return context.expected;
  const previous = chunks[i - 1];
  return padPosition(previous[previous.length - 1].position);
}
