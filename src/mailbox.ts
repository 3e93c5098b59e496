/**
 * The library API: `createMailbox(config)` wires the adapters, rebuilds or
 * catches up the views, and returns the command and query sides plus a
 * per-caller client (`as(token)` / `asActor(actor)`).
 */
import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';
import {
  configSchema,
  inOptionTerms,
  nodeIdOf,
  optionOf,
  parseOptions,
  type MailboxConfig,
  type MailboxConfigInput,
} from './config';
import { checkedAuditPage, checkedCommandOptions as opts, refuseUnknownConfigKeys } from './libraryOptions';
import { guardedListener, OpenWatches, WATCH_CLOSED_REASON, type WatchListener, type WatchOptions } from './watchListener';
import { LeaseKeeper, LeaseLoop, leaseTiming, tookOverFrom, tookOverText, type LeaseStore } from './projections/projectorLease';
import {
  buildContainer,
  freshStartOf,
  leasesOf,
  sharedLimitsOf,
  type ContainerOverrides,
  type FreshStart,
} from './compositionRoot';
import { TOKENS } from './tokens';
import type { Actor } from './commands/roles';
import { MailboxCommands, type CommandOptions } from './application/mailboxCommands';
import { MailboxQueries } from './application/mailboxQueries';
import { Authenticator } from './application/authenticator';
import { TaskCommands } from './application/taskCommands';
import { TaskQueries } from './application/taskQueries';
import { TaskSweeper } from './application/taskSweeper';
import { DeliveryQueries } from './application/deliveryQueries';
import { WakeRecorder } from './application/wakeRecorder';
import type { Clock } from './application/runtime';
import { SeenMarks } from './application/seenMarks';
import type { EventStore } from './events/eventStore';
import type { ProjectionStore } from './projections/projectionStore';
import type { ProjectionRunner } from './projections/projectionRunner';
import type { WakeBus } from './projections/wakeBus';
import type { SharedLimits } from './application/sharedLimits';
import type { RejectionLog } from './application/rejectionLog';
import { LiveWriterOfAnotherLog, rebuildProjections } from './projections/rebuild';
import { aheadOfThisLog, ForeignViews } from './projections/viewsOwnership';
import { isStartupError, StartupError, StartupInterrupted } from './startupError';
import { checkDirectoryPath, checkEventStoreUrl, checkRedisNames, translateStartupError } from './startupChecks';
import { everyRefusalInMethodTerms, inMethodTerms, openRefusalInOptionTerms, warningsInMethodWords } from './libraryTerms';
import { isMailboxError, MailboxError } from './errors';
import { retry } from './support/retry';
import { lookAtRulesUntilTold, rebuildViewsOfOtherRules } from './application/olderRules';
import { everyCallWhileOpen, whileOpen } from './application/whileOpen';
import { hashToken } from './application/tokenHash';
import type {
  ListMessagesQuery,
  ListTasksQuery,
  MarkReadRequest,
  RegisterAgentRequest,
  SendRequest,
  UpdateTaskRequest,
} from './libraryInputs';

export class Mailbox {
  readonly commands: MailboxCommands;
  readonly queries: MailboxQueries;
  /** Tasks (issue 12): claims and transitions; their lists and A2A form. */
  readonly tasks: TaskCommands;
  readonly taskQueries: TaskQueries;
  /** Ends expired tasks and returns lapsed leases when due and every config.taskSweepMs (started with the runner). */
  readonly sweeper: TaskSweeper;
  /** Seen marks waiting to be written (issue 13); flushSeenMarks writes them now. */
  readonly seenMarks: SeenMarks;
  readonly authenticator: Authenticator;
  /** The delivery ledger of a message (issue 13). */
  readonly deliveries: DeliveryQueries;
  /** Records the wakes this process handed to open wake streams (the ledger's `woken`), in batches. */
  readonly wakeRecorder: WakeRecorder;
  readonly clock: Clock;
  readonly runner: ProjectionRunner;
  readonly eventStore: EventStore;
  readonly projections: ProjectionStore;
  readonly wakeBus: WakeBus;
  /** Request limits shared by every API node (Redis), or null: each process keeps its own. */
  readonly sharedLimits: SharedLimits | null;
  readonly rejections: RejectionLog;
  /** This mailbox's logger (createMailbox's `logger`, else one at config.logLevel): startHeartbeat(mailbox) logs there too. */
  readonly logger: Logger;
  /** Resolves once the views are this log's and followed (at once, unless a take-over is rebuilding them). */
  viewsReady: Promise<void> = Promise.resolve();
  /** Resolves when views built by other rules are rebuilt with this version's (application/olderRules.ts), or at once. */
  rulesRebuilt: Promise<void> = Promise.resolve();
  private readonly closing = new AbortController();
  private readonly watches = new OpenWatches();
  /** Stops hearing this mailbox's retirements and rotations (they end the watches they concern). */
  private readonly stopHearingRevocations: () => void;
  /** Looks up again, each second, the tokens (or agents, for asActor's) of the open watches (a retirement elsewhere ends them). */
  private tokenRecheck: NodeJS.Timeout | null = null;

  constructor(
    readonly container: DependencyContainer,
    readonly config: MailboxConfig,
  ) {
    this.commands = container.resolve(MailboxCommands);
    this.queries = container.resolve(MailboxQueries);
    this.tasks = container.resolve(TaskCommands);
    this.taskQueries = container.resolve(TaskQueries);
    this.sweeper = container.resolve(TaskSweeper);
    this.seenMarks = container.resolve(SeenMarks);
    this.authenticator = container.resolve(Authenticator);
    this.deliveries = container.resolve(DeliveryQueries);
    this.runner = container.resolve<ProjectionRunner>(TOKENS.ProjectionRunner);
    this.eventStore = container.resolve<EventStore>(TOKENS.EventStore);
    this.projections = container.resolve<ProjectionStore>(TOKENS.ProjectionStore);
    this.wakeBus = container.resolve<WakeBus>(TOKENS.WakeBus);
    this.sharedLimits = sharedLimitsOf(container);
    this.rejections = container.resolve<RejectionLog>(TOKENS.RejectionLog);
    this.clock = container.resolve<Clock>(TOKENS.Clock);
    this.logger = container.resolve<Logger>(TOKENS.Logger);
    this.wakeRecorder = new WakeRecorder(
      this.eventStore,
      container.resolve<Clock>(TOKENS.Clock),
      container.resolve<Logger>(TOKENS.Logger),
      {
        actor: 'system:wake-streams',
      },
    );
    // A watching agent retired, or its token rotated, by this mailbox: its watches end at once, with a last `revoked`.
    this.stopHearingRevocations = this.authenticator.onRevoked((identity, reason) => void this.watches.revoke(identity, reason));
  }

  /** A client acting as the holder of `token` (identity from the token only). */
  async as(token: string) {
    const authenticate = whileOpen(this.closing.signal, () => this.authenticator.authenticate(checkedToken(token)));
    const actor = await authenticate().catch((error: unknown) => {
      throw inMethodTerms(error);
    });
    return this.clientOf(actor, hashToken(token as string)); // a token that authenticated is a string
  }

  /**
   * Once close() has begun, each of its methods rejects with UNAVAILABLE (whileOpen.ts), a client taken earlier too.
   * Its refusals name its methods, where HTTP and MCP name their routes and tools (libraryTerms.ts).
   */
  asActor(actor: Actor) {
    return this.clientOf(actor, null);
  }

  /** `tokenHash`: the token the client was taken with (its watches end when it stops working), null for asActor's. */
  private clientOf(actor: Actor, tokenHash: string | null) {
    const { commands: c, queries: q, tasks: t, taskQueries: tq } = this;
    return everyRefusalInMethodTerms(
      everyCallWhileOpen(this.closing.signal, {
        actor,
        registerAgent: (input: RegisterAgentRequest, o?: CommandOptions) =>
          c.registerAgent(actor, input, opts('registerAgent', o, false)),
        retireAgent: (identity: string, o?: CommandOptions) => c.retireAgent(actor, { identity }, opts('retireAgent', o, false)),
        rotateToken: (identity: string, o?: CommandOptions) =>
          c.rotateAgentToken(actor, { identity }, opts('rotateToken', o, false)),
        send: (input: SendRequest, o?: CommandOptions) => c.send(actor, input, opts('send', o, true)).then(warningsInMethodWords),
        /** send's result (unchanged), with `replayed`: true when it replayed a send made already with its idempotencyKey. */
        sendOutcome: (input: SendRequest, o?: CommandOptions) =>
          c
            .sendOutcome(actor, input, opts('send', o, true))
            .then((outcome) => ({ ...outcome, result: warningsInMethodWords(outcome.result) })),
        markRead: (input: MarkReadRequest, o?: CommandOptions) => c.markRead(actor, input, opts('markRead', o, false)),
        archive: (messageId: string, o?: CommandOptions) => c.archive(actor, { messageId }, opts('archive', o, false)),
        unarchive: (messageId: string, o?: CommandOptions) => c.unarchive(actor, { messageId }, opts('unarchive', o, false)),
        listMessages: (query: ListMessagesQuery = {}) => q.listMessages(actor, query),
        getMessage: (messageId: string) => q.getMessage(actor, { messageId }),
        delivery: (messageId: string, page: { after?: string; limit?: number } = {}) =>
          this.deliveries.delivery(actor, { messageId, ...page }),
        unreadCount: () => q.unreadCount(actor),
        listAgents: () => q.listAgents(),
        heartbeats: () => q.heartbeats(actor),
        /** The log after `after` (null: from its start), `limit` events (1-1000); a page's nextAfter gives the next. */
        auditEvents: (after: bigint | string | null = null, limit = 100) => {
          const page = checkedAuditPage(after, limit);
          return q.auditEvents(actor, page.after, page.limit);
        },
        /**
         * A listener's error (thrown, or its promise's) goes to onError, else the logger; the stream stays open.
         * mailbox.close() ends it with a last `closed` event; its agent retired or its token rotated, with `revoked`.
         * A client of asActor whose identity no one registered is refused (AGENT_NOT_FOUND): it would hear nothing.
         */
        watch: async (listener: WatchListener, options?: WatchOptions) => {
          const guarded = guardedListener(listener, options, this.logger);
          // A client of asActor names any identity: one never registered is refused, not watched in silence for good.
          if (tokenHash === null && actor.role === 'agent') await this.authenticator.refuseUnregisteredWatcher(actor.identity);
          const stop = await this.watches.watch({ identity: actor.identity, tokenHash }, guarded, (emit) =>
            q.openWakeStream(actor, emit),
          );
          this.recheckWatches();
          return stop;
        },
        claimTask: (taskId: string, options: { leaseSeconds?: number } = {}, o?: CommandOptions) =>
          t.claim(actor, { taskId, ...options }, opts('claimTask', o, false)),
        updateTask: (input: UpdateTaskRequest, o?: CommandOptions) => t.transition(actor, input, opts('updateTask', o, false)),
        listTasks: <Text extends string = string>(query: ListTasksQuery<Text> = {}) => tq.listTasks(actor, query),
        getTask: (taskId: string) => tq.getTask(actor, { taskId }),
      }),
    );
  }

  /**
   * The views belong to another log (or stand ahead of this one): refuse to
   * start (default, one line, nothing written), or with take-over rebuild
   * them from this log into a fresh generation, in the background, when no
   * projector of the other log is live. Until then readiness is 503 and no
   * read is served from the other log's views.
   */
  async handleForeignViews(foreign: ForeignViews): Promise<void> {
    const details = {
      location: foreign.binding.location,
      viewsOf: foreign.binding.logIdentity,
      logIdentity: foreign.logIdentity,
    };
    const generations = this.projections.generations?.();
    if (this.config.projectionsOnForeign !== 'take-over' || !generations) throw new StartupError(foreign.message, details);
    const before = await generations.active();
    if (before.liveWriter !== null && before.liveWriter !== foreign.logIdentity) {
      throw new StartupError(
        `${foreign.binding.location}: ${new LiveWriterOfAnotherLog(before.liveWriter, foreign.binding).message}`,
        details,
      );
    }
    await this.projections.claim(foreign.logIdentity); // serve nothing of the other log meanwhile (writes nothing: its views are held)
    const logger = this.container.resolve<Logger>(TOKENS.Logger);
    // Views of this log ahead of its head are replaced, not taken over from a log: the log they name is this one.
    const { verdict } = foreign;
    const what =
      verdict.kind === 'ahead'
        ? `replacing views ahead of this log's head: the views in ${foreign.binding.location} stand ` +
          aheadOfThisLog(verdict, foreign.logIdentity)
        : `taking over ${foreign.binding.location} from ${foreign.binding.logIdentity ?? 'an unknown log'}`;
    this.runner.noteViewsProblem(
      `${what[0].toUpperCase()}${what.slice(1)}: the views are being rebuilt from this log and are not served until the switch.`,
    );
    logger.warn(details, `projections: ${what}; rebuilding the views from this log (readiness is 503 until done)`);
    this.viewsReady = (async () => {
      // A store that is briefly unavailable (a Redis restart, a paused server) delays the take-over, it does not end it.
      const result = await retry(
        () =>
          rebuildProjections(this.eventStore, generations, {
            takeOver: true,
            dropPreviousAfterMs: null,
            views: foreign.binding,
            onProgress: ({ phase, retry, position }) => {
              if (phase === 'retrying')
                logger.warn(
                  { ...details, ...retry, position: position?.toString() ?? null },
                  'projections: the take-over rebuild could not copy for now; trying again from where it stands',
                );
            },
          }),
        {
          attempts: Infinity,
          backoff: { initialDelayMs: 200, maxDelayMs: 5000, jitter: 0.2 },
          signal: this.closing.signal,
          retryable: (error) => isMailboxError(error) && error.code === 'UNAVAILABLE',
          onRetry: (attempt, error, delayMs) =>
            logger.warn(
              { err: error, attempt, retryInMs: Math.round(delayMs), ...details },
              'projections: the take-over rebuild met an unavailable store; retrying',
            ),
        },
      );
      // In the shape of an admin's act (mailboxCommands.ts logAdminAction): what was done, by what, to which views.
      logger.warn(
        {
          adminAction: verdict.kind === 'ahead' ? 'replaced views ahead of the log' : 'took over views',
          by: 'MAILBOX_PROJECTIONS_ON_FOREIGN=take-over',
          ...details,
          generation: result.generation,
          previous: result.previous,
          events: result.events,
          ms: result.ms,
        },
        `projections: ${verdict.kind === 'ahead' ? "replaced the views ahead of this log's head in" : 'took over'} ` +
          `${foreign.binding.location}; the previous views (generation ${result.previous}) are kept until deleted`,
      );
      await this.runner.start();
    })();
    this.viewsReady.catch((error: unknown) =>
      logger.error({ err: error, ...details }, 'projections: the take-over failed; the views are not served'),
    );
  }

  /**
   * Views that Redis kept from a mailbox of another version, built by other rules, are rebuilt from the log in the
   * background with this version's (application/olderRules.ts); they serve reads meanwhile.
   */
  rebuildViewsOfOtherRules(): void {
    const generations = this.projections.generations?.();
    if (!generations) return;
    const logger = this.container.resolve<Logger>(TOKENS.Logger);
    // Looked at until told (olderRules.ts lookAtRulesUntilTold): a failed look said 'the next start looks again', and
    // nothing looked again until a restart.
    this.rulesRebuilt = lookAtRulesUntilTold({
      look: async () =>
        rebuildViewsOfOtherRules(this.eventStore, generations, await this.projections.binding(), logger, this.closing.signal, {
          now: () => this.clock.now(),
          rebuilding: (rebuild) => this.runner.noteRulesRebuild(rebuild),
          switched: (generation) => this.runner.noteOwnSwitch(generation),
        }),
      logger,
      signal: this.closing.signal,
      now: () => this.clock.now(),
      unknown: (unknown) => this.runner.noteRulesUnknown(unknown),
    });
  }

  /**
   * Writes the seen marks noted so far and waits (bounded, as commands do) until the views show them:
   * a test or a script that wants the next list or count to reflect what was returned calls this.
   */
  async flushSeenMarks(waitMs = 5000): Promise<void> {
    return whileOpen(this.closing.signal, async () => {
      const position = await this.seenMarks.flush();
      if (position !== null) await this.runner.waitFor(position, waitMs);
    })();
  }

  /**
   * While a watch is open, its token (or, for a client of asActor, its agent) is looked up again each second, as an
   * HTTP wake stream's token is: a retirement or a rotation by another mailbox on the same log (another API node)
   * reaches this one only through the registry. Stops once no watch is open.
   */
  private recheckWatches(): void {
    if (this.tokenRecheck !== null) return;
    this.tokenRecheck = setInterval(() => {
      if (!this.watches.any()) {
        clearInterval(this.tokenRecheck!);
        this.tokenRecheck = null;
        return;
      }
      void this.watches.recheck(
        (hash) => this.authenticator.revocationOf(hash),
        (identity) => this.authenticator.retirementOf(identity),
      );
    }, WATCH_TOKEN_RECHECK_MS);
    this.tokenRecheck.unref();
  }

  /**
   * Ends the mailbox: from here every call of the library rejects with UNAVAILABLE, naming createMailbox. Each open
   * watch's listener is told first, in a last `closed` event.
   */
  async close(): Promise<void> {
    this.closing.abort();
    this.stopHearingRevocations();
    if (this.tokenRecheck !== null) clearInterval(this.tokenRecheck);
    this.tokenRecheck = null;
    await this.watches.closeAll(WATCH_CLOSED_REASON);
    await this.sweeper.stop();
    await this.seenMarks.close().catch(() => undefined); // written if the store still takes them
    await this.viewsReady.catch(() => undefined);
    await this.rulesRebuilt;
    await this.runner.stop();
    await leasesOf(this.container)?.close();
    await this.wakeRecorder.close();
    await this.wakeBus.close();
    await this.sharedLimits?.close();
    await this.projections.close();
    await this.rejections.close();
    await this.eventStore.close();
  }
}

/** How often the tokens of open watches are looked up again (as HTTP wake streams' are: TOKEN_RECHECK_MS). */
const WATCH_TOKEN_RECHECK_MS = 1000;

export type MailboxClient = ReturnType<Mailbox['asActor']>;

type ClientMethod = Exclude<keyof MailboxClient, 'actor'>;
/** What a client's method resolves to, by its name: MailboxAnswer<'listMessages'> is a page of messages. */
export type MailboxAnswer<M extends ClientMethod> = Awaited<ReturnType<MailboxClient[M]>>;
/** What a client's method takes, by its name: MailboxArguments<'send'>[1] is a send's options. */
export type MailboxArguments<M extends ClientMethod> = Parameters<MailboxClient[M]>;

/**
 * as(token) given something other than a string (a number from a config file, a token object) rejected with Node's
 * TypeError ERR_INVALID_ARG_TYPE from the token hash, no envelope; it is UNAUTHENTICATED as a missing token is.
 */
function checkedToken(token: unknown): string | undefined | null {
  if (token === undefined || token === null || typeof token === 'string') return token;
  throw new MailboxError(
    'UNAUTHENTICATED',
    'Unauthenticated',
    `mailbox.as takes a bearer token as a string, not ${Array.isArray(token) ? 'an array' : typeof token === 'object' ? 'an object' : `a ${typeof token}`}: ` +
      "the token registerAgent returned (its 'token'), or the admin token.",
  );
}

/** The task sweeper's lease: with shared views, one replica sweeps (the same kind of lease as the projector's). */
function sweeperLease(store: LeaseStore, config: MailboxConfig, logger: Logger, sweeper: TaskSweeper): LeaseLoop {
  const node = nodeIdOf(config);
  return new LeaseLoop(
    new LeaseKeeper(store, node, leaseTiming(config.projectorLeaseMs), Date.now, {
      lead: (token, previous) => {
        logger.info(
          { node, token: token.toString(), ...tookOverFrom(previous) },
          `task sweeper: this node holds the lease and sweeps${tookOverText(previous)}`,
        );
        sweeper.leaseGained(); // what fell due while no node swept is swept now, not an interval later
      },
      // Unreachable, the store is most often down for every node: none sweeps until one takes the lease again.
      stepDown: (reason, { storeUnreachable, vacant }) =>
        logger.warn(
          { node, reason },
          `task sweeper: stepped down (${reason}); ` +
            (storeUnreachable
              ? 'this node sweeps nothing until it holds the lease again (it tries every ' +
                `${leaseTiming(config.projectorLeaseMs).lookMs} ms; another node that reaches the store may take it first)`
              : vacant
                ? `it takes the lease again at its next look (within ${leaseTiming(config.projectorLeaseMs).lookMs} ms), ` +
                  'unless another node takes it first'
                : 'another node sweeps'),
        ),
      follow: (leader) =>
        logger.info(
          { node, leader: leader.node, token: leader.token.toString() },
          `task sweeper: following ${leader.node} (token ${leader.token}), which holds the lease and sweeps`,
        ),
      unreachable: (reason) =>
        logger.warn(
          { node, reason },
          `task sweeper: cannot reach the sweeper lease's store (${reason}); this node, which does not hold the lease, ` +
            `looks every ${leaseTiming(config.projectorLeaseMs).lookMs} ms and takes it if it is free once the store answers`,
        ),
      reachable: () => logger.info({ node }, "task sweeper: the sweeper lease's store answers again"),
    }),
  );
}

/**
 * The data dir, checked as `mailbox serve` checks it, where the mailbox keeps files there (the SQLite log, the views
 * file): a dataDir that is a file, or not writable, rejected with a raw SqliteError ('unable to open database file').
 * Then the stores' URLs (and the Redis CA file), as serve checks them before it creates anything: a malformed
 * redisUrl was refused only once the SQLite log had been made in dataDir, in the variables' words (MAILBOX_REDIS_URL).
 */
function checkStoreOptions(config: MailboxConfig): void {
  try {
    if (config.eventStoreUrl === undefined || config.views === 'sqlite')
      checkDirectoryPath('dataDir', config.dataDir, config.dataDir);
    if (config.eventStoreUrl !== undefined) checkEventStoreUrl(config.eventStoreUrl);
    checkRedisNames(config);
  } catch (error) {
    if (!isStartupError(error)) throw error;
    const variable = error.details.variable;
    throw new MailboxError('VALIDATION_FAILED', 'Invalid configuration', `${inOptionTerms(error.message)} Nothing was opened.`, {
      field: typeof variable === 'string' ? optionOf(variable) : 'dataDir',
    });
  }
}

/**
 * The library's entry point: every refusal is a MailboxError in createMailbox's own terms (dataDir, redisUrl, ...).
 * A refusal met while opening (another process serving the data dir, a log SQLite cannot read, views of another log,
 * Redis unreachable) was mailbox serve's: a StartupError, or an UnreadableLogFile, neither of them the MailboxError a
 * caller is told to catch, naming MAILBOX_DATA_DIR and MAILBOX_REDIS_URL (libraryTerms.ts).
 *
 * `interrupted`: aborted when the process is asked to stop while this runs: the views' catch-up stops after its batch
 * in progress, everything opened is closed, and this rejects with StartupInterrupted.
 */
export async function createMailbox(
  input: MailboxConfigInput = {},
  overrides: ContainerOverrides = {},
  options: { interrupted?: AbortSignal } = {},
): Promise<Mailbox> {
  const config = checkedOptions(input);
  const fresh = freshStartOf(config); // a refused first start leaves the data dir as it found it
  return openMailbox(config, overrides, { ...options, fresh }).catch(async (error: unknown) => {
    await fresh.undo();
    throw openRefusalInOptionTerms(translateStartupError(error, config));
  });
}

/** createMailbox's options, refused in their own terms before anything is opened. */
function checkedOptions(input: MailboxConfigInput): MailboxConfig {
  refuseUnknownConfigKeys(input, Object.keys(configSchema.shape));
  const config = parseOptions(input);
  checkStoreOptions(config);
  return config;
}

/**
 * createMailbox as mailbox serve opens it (server.ts): a refusal at open stays serve's, a StartupError in the
 * variables' words (one line, exit code 2). Options checked as createMailbox checks them.
 */
export async function openMailbox(
  input: MailboxConfigInput = {},
  overrides: ContainerOverrides = {},
  { interrupted, fresh }: { interrupted?: AbortSignal; fresh?: FreshStart } = {},
): Promise<Mailbox> {
  const config = checkedOptions(input);
  const container = await buildContainer(config, overrides, { viewsOwner: true, fresh });
  container.registerSingleton(MailboxCommands);
  container.registerSingleton(MailboxQueries);
  container.registerSingleton(TaskCommands);
  container.registerSingleton(TaskQueries);
  container.registerSingleton(TaskSweeper);
  container.registerSingleton(SeenMarks);
  container.registerSingleton(Authenticator);
  container.registerSingleton(DeliveryQueries);
  const mailbox = new Mailbox(container, config);
  try {
    const views = await mailbox.runner.start(interrupted).then(
      () => 'this log' as const,
      (error: unknown) => {
        if (error instanceof ForeignViews) return mailbox.handleForeignViews(error).then(() => 'taken over' as const);
        throw error;
      },
    );
    if (interrupted?.aborted) {
      // A log with no event has no head (null): that is position 0 of 0, not "of unknown", which a first start stopped
      // at once said as if the log could not be read; only a head that cannot be read is unknown.
      const head = await mailbox.eventStore.headPosition().then(
        (position) => position ?? 0,
        () => 'unknown',
      );
      const at = mailbox.runner.getStatus().checkpoint ?? '0';
      throw new StartupInterrupted(
        `while the views caught up with the log, at position ${at} of ${head} (the next start resumes there)`,
      );
    }
    if (views === 'this log') mailbox.rebuildViewsOfOtherRules(); // a take-over builds with this version's rules
  } catch (error) {
    await mailbox.close().catch(() => undefined);
    throw error;
  }
  const leases = leasesOf(container);
  if (leases)
    mailbox.sweeper.useLease(
      sweeperLease(leases.lease('sweeper'), config, container.resolve<Logger>(TOKENS.Logger), mailbox.sweeper),
    );
  mailbox.sweeper.start(config.taskSweepMs);
  return mailbox;
}
