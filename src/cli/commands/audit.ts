/**
 * `mailbox audit replay | message <id> | agent <identity> | verify`.
 * The log comes from the configured event store (MAILBOX_* variables), or
 * over HTTP from GET /v1/audit/events with --url and an auditor or admin
 * token (MAILBOX_AUDIT_TOKEN). `verify` needs the stores themselves.
 */
import { Option, type Command } from 'commander';
import type * as Pino from 'pino';
import { z } from 'zod';
import { identitySchema, oneMessageSchema } from '../../commands/schemas';
import { parseInput } from '../../commands/validation';
import { DEFAULT_WAKE_SLA_MS, refuseEmpty, type MailboxConfig } from '../../config';
import { isMailboxError, MailboxError } from '../../errors';
import { durationSchema, parseDurationMs } from '../../support/duration';
import { MAILBOX_EVENT_TYPES, type MailboxEventType } from '../../events/types';
import type * as AuditCommands from '../../audit/auditCommands';
import type { OutputOptions } from '../../audit/auditCommands';
import { processIo, type AuditIo } from '../../audit/auditOutput';
import { requireViewsOfThisLog, ViewsNotOfThisLog } from '../../audit/verify/viewsOfThisLog';
import { eventStoreSource, type LogSource } from '../../audit/logSource';
import type { ReplayFilter, ReplaySummary } from '../../audit/replay';
import type * as CompositionRoot from '../../compositionRoot';
import { commandConfig, readingFailure, reportCommandFailure, toolLogLevel } from './commandConfig';
import { choiceMeant } from './choiceValues';
import { collecting } from './repeatedOptions';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded when a command runs: --help and a usage error do not */
/** The stores (the composition root), the audit tools and the logger. */
const root = () => require('../../compositionRoot') as typeof CompositionRoot;
const tools = () => require('../../audit/auditCommands') as typeof AuditCommands;
const loadPino = () => (require('pino') as typeof Pino).pino;
/* eslint-enable @typescript-eslint/no-require-imports */

interface SourceFlags {
  url?: string;
  token?: string;
  json?: boolean;
  progress?: boolean;
}

const EVENT_TYPES: ReadonlySet<string> = new Set(MAILBOX_EVENT_TYPES);

/** Words for an event that name another type than the one they suggest ('MessageRead': a read is a receipt). */
const EVENT_WORDS: Readonly<Record<string, MailboxEventType>> = {
  messageread: 'ReceiptRead',
  read: 'ReceiptRead',
  agentcreated: 'AgentRegistered',
  agentadded: 'AgentRegistered',
  agentdeleted: 'AgentRetired',
  agentremoved: 'AgentRetired',
};

/**
 * The event type `type` most likely means (another case, '_' or '-' between its words, a near miss, a word for it),
 * or undefined; never taken in its place, only said.
 */
function eventTypeMeant(type: string): string | undefined {
  const word = type.replace(/[\s_.-]/g, '');
  return EVENT_WORDS[word.toLowerCase()] ?? choiceMeant(word, MAILBOX_EVENT_TYPES);
}

/**
 * The event types of --type, checked as one list: an element's own issue would be named by its zod path ('type.0'),
 * not by the option the user typed. An empty list (`--type ''`, `--type ,`) is refused too: it would match nothing.
 * A type that is not one names the one likely meant: the list alone left 'MesageSent' or 'message_sent' to be
 * found in 21 names.
 */
const eventTypesSchema = z
  .array(z.string())
  .superRefine((types, ctx) => {
    const unknown = types.filter((type) => !EVENT_TYPES.has(type));
    if (types.length > 0 && unknown.length === 0) return;
    const meant = unknown.flatMap((type) => {
      const near = eventTypeMeant(type);
      return near === undefined ? [] : [unknown.length === 1 ? near : `${near} for '${type}'`];
    });
    const wrong =
      unknown.length === 0
        ? 'names no event type'
        : `has ${unknown.map((type) => `'${type}'`).join(', ')}, which ${unknown.length === 1 ? 'is not an event type' : 'are not event types'}` +
          (meant.length === 0 ? '' : ` (did you mean ${meant.join(', ')}?)`);
    ctx.addIssue({
      code: 'custom',
      message: `${wrong}; give one or more of ${MAILBOX_EVENT_TYPES.join(', ')} (repeat --type or comma-separate them)`,
    });
  })
  .transform((types) => types as MailboxEventType[]);

/**
 * A duration (30s, 2m) or milliseconds, as MAILBOX_WAKE_SLA_MS is read by serve and the heartbeat: --sla took digits
 * only while the variable behind it took 2m in the heartbeat. Past the safe integers it says the bound, not zod's own
 * "Too big: expected int".
 */
const SLA_FLAG = z.preprocess((text, ctx) => {
  const ms = typeof text === 'string' ? parseDurationMs(text) : null;
  if (ms === null || Number.isSafeInteger(ms)) return text;
  ctx.addIssue({ code: 'custom', message: `takes at most ${Number.MAX_SAFE_INTEGER} ms` });
  return z.NEVER;
}, durationSchema);

/** Keyed by the options as typed, so that an error names '--from', not 'from'. */
const replayFlagsSchema = z.strictObject({
  '--from': z.string().regex(/^\d+$/, 'takes a log position (digits), e.g. --from 1200').optional(),
  '--type': eventTypesSchema.optional(),
  '--stream': z.string().min(1).optional(),
});

const collect = collecting((value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
]);
const outputOf = (flags: SourceFlags): OutputOptions => ({ json: flags.json === true, progress: flags.progress !== false });

function logger(io: AuditIo) {
  // Logs go to stderr so that stdout carries only the audit output.
  const pino = loadPino();
  return pino({ level: toolLogLevel(io.env), name: 'mailbox-audit' }, pino.destination({ dest: 2, sync: true }));
}

/**
 * MAILBOX_AUDIT_TOKEN set but blank (spaces) was sent to the server as a token, refused "The Authorization header must
 * be 'Bearer <token>'", and set but empty said "needs an auditor or admin token: set MAILBOX_AUDIT_TOKEN" while it was
 * set: both are refused by the rule of every MAILBOX_* variable (refuseEmpty: one line, exit code 2).
 */
const AUDIT_TOKEN_WHEN_EMPTY =
  "an auditor's token (mailbox agent add @ops --role auditor prints one) or the admin token, or unset it and pass --token <token>";

/** The log from --url (HTTP, auditor/admin token) or from the configured event store. */
async function openSource(flags: SourceFlags, io: AuditIo): Promise<{ source: LogSource; close: () => Promise<void> }> {
  if (flags.url !== undefined) {
    if (flags.token === undefined) refuseEmpty(io.env, 'MAILBOX_AUDIT_TOKEN', AUDIT_TOKEN_WHEN_EMPTY);
    else if (flags.token.trim() === '')
      throw new MailboxError(
        'VALIDATION_FAILED',
        'Validation failed',
        `--token is ${flags.token === '' ? 'empty' : 'blank (only spaces)'}: pass an auditor's or the admin token, or leave --token out and set MAILBOX_AUDIT_TOKEN.`,
        { field: '--token' },
      );
    const token = flags.token ?? io.env.MAILBOX_AUDIT_TOKEN;
    if (!token) {
      throw new MailboxError(
        'UNAUTHENTICATED',
        'Unauthenticated',
        'Reading the log over HTTP needs an auditor or admin token: set MAILBOX_AUDIT_TOKEN (or pass --token).',
      );
    }
    return root().openAuditLog(commandConfig(io.env, { stores: false }), logger(io), { url: flags.url, token });
  }
  return root().openAuditLog(commandConfig(io.env), logger(io));
}

/**
 * `M of N events shown`, N the events in the range asked for (the stream's, from --from on) before --type, and that range
 * named: a stream's replay said "1 of 8 events shown" read directly (its 8 events) and "1 of 30855" over --url (the log
 * it scanned for them), and neither said which events N counted.
 */
function replaySummaryLine(summary: ReplaySummary, filter: ReplayFilter): string {
  return `${summary.matched} of ${summary.inRange} events shown${replayScope(filter)}`;
}

/** The range a replay was asked for, as its count line names it: ` (stream ..., from position ..., --type ...)`. */
function replayScope(filter: ReplayFilter): string {
  const scope = [
    filter.stream === null ? null : `stream ${filter.stream}`,
    filter.from === null ? null : `from position ${filter.from}`,
    filter.types === null ? null : `--type ${[...filter.types].join(',')}`,
  ].filter((part) => part !== null);
  return scope.length === 0 ? '' : ` (${scope.join(', ')})`;
}

/**
 * A text replay whose --from is past the log head answers as a replay does, with its count line on stderr, saying where
 * the log ends: `0 events shown (from position 1200, --type ReceiptRead): the log ends at position 2. ...`
 * (exit 1, "nothing there yet", as docs/auditors.md says). It printed the error envelope, as for a failure, though
 * nothing failed (--json still does: JSON where JSON was asked for).
 */
async function answeringPastTheHead(filter: ReplayFilter, flags: SourceFlags, io: AuditIo, replay: () => Promise<number>) {
  try {
    return await replay();
  } catch (caught) {
    if (flags.json || !(caught instanceof tools().PastTheHead)) throw caught;
    io.stderr.write(`0 events shown${replayScope(filter)}: ${caught.endOfLog}\n`);
    return 1;
  }
}

/** Runs an audit command; a failure is one line on stderr, or its envelope with --json (`flags.json`). */
async function run(io: AuditIo, flags: { json?: boolean }, work: () => Promise<number>): Promise<void> {
  const out = { stderr: io.stderr, json: flags.json === true };
  // `mailbox audit replay | head`: the reader left; stop quietly, as Unix tools do on SIGPIPE.
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    reportCommandFailure(new Error(`Writing the output failed: ${error.message}`), out, 'Output failed');
    process.exit(2);
  });
  try {
    process.exitCode = await work();
  } catch (caught) {
    // Views of another log: no views of this log to verify, as 'No views' (not found) is; a usage error it is not.
    process.exitCode = reportCommandFailure(readingFailure(caught, io.env), out, 'Audit failed', (error) =>
      error instanceof ViewsNotOfThisLog
        ? {
            envelope: { error: 'Views of another log', code: 'FOREIGN_VIEWS', message: error.message, ...error.details },
            notFound: true,
          }
        : undefined,
    );
  }
}

async function withSource(flags: SourceFlags, io: AuditIo, work: (source: LogSource) => Promise<number>): Promise<number> {
  const { source, close } = await openSource(flags, io);
  try {
    return await work(source);
  } catch (caught) {
    throw flags.url === undefined ? caught : namingTheToken(caught, flags);
  } finally {
    await close();
  }
}

/**
 * A token the server does not take was refused in the server's words alone ("The bearer token is not valid for this
 * mailbox ... An agent gets its token when an admin registers it"), naming neither the setting the auditor got it from
 * nor the token audit wants: the refusal now names both (and `field`).
 */
function namingTheToken(caught: unknown, flags: SourceFlags): unknown {
  if (!isMailboxError(caught) || caught.code !== 'UNAUTHENTICATED') return caught;
  const from = flags.token === undefined ? 'MAILBOX_AUDIT_TOKEN' : '--token';
  const { error, code, message, ...details } = caught.envelope;
  return new MailboxError(
    code,
    error,
    `${message} The token sent is ${from}'s: set it to an auditor's token (mailbox agent add @ops --role auditor prints ` +
      'one) or the admin token.',
    { ...details, field: from },
  );
}

/**
 * verify reads the server's views file and never creates it: opened when missing, it was created empty (the data dir
 * changed by a reader) and verified against the log ('OK' on an empty log). Refused as not found (exit 1), saying
 * who builds the views, and that a server on Redis views keeps none there (verify run without its MAILBOX_REDIS_URL).
 */
function refuseMissingViews(config: MailboxConfig): void {
  const file = root().missingSqliteViewsFile(config);
  if (file === null) return;
  throw noViews(
    `the SQLite views file ${file} does not exist (no server has started on this log, the file was deleted while it ` +
      "was stopped, or the server keeps its views in Redis: run this with the server's MAILBOX_REDIS_URL)",
    'Nothing was created.',
    { file },
  );
}

/**
 * Views that hold nothing and belong to no log (judgeViews's 'unclaimed': what older readers left behind when they
 * created the views file, or a namespace no projector has claimed) are no views either, as `projections status` says
 * ("no views yet"): verify compared them with the log anyway (drift on any log with events, 'OK' on an empty one).
 * Refused as a missing views file is.
 */
function refuseUnclaimedViews(config: MailboxConfig): never {
  const file = root().sqliteViewsFile(config);
  throw noViews(
    config.redisUrl === undefined && file !== null
      ? `the SQLite views file ${file} holds none, of any log (no server has built them since the file was created)`
      : `the Redis namespace '${config.redisNamespace}' holds none, of any log (no server has built them there)`,
    'Nothing was written.',
    config.redisUrl === undefined && file !== null ? { file } : { namespace: config.redisNamespace },
  );
}

function noViews(what: string, nothingDone: string, details: Record<string, unknown>): MailboxError {
  return new MailboxError(
    'NOT_FOUND',
    'No views',
    `There are no views to verify: ${what}. The server (mailbox serve) builds the views from the log at its next ` +
      `start; verify them after that. ${nothingDone}`,
    details,
  );
}

/**
 * Each audit command's exit codes, in its own --help: only `audit verify` and `mailbox audit --help` said them, so
 * `mailbox audit message --help` did not say that a message the log does not hold exits 1.
 */
const USAGE_CODE = '2 usage, configuration or access error';
const exitCodes = (codes: string): string => `\nExit codes: ${codes}, ${USAGE_CODE}. See docs/auditors.md.`;

/** What --json does to a failure, in each audit command's --help: it was one JSON envelope either way. */
const JSON_FAILURE = 'and a failure as the JSON error envelope on stderr (else one line, mailbox: <message>)';

/** `jsonHelp`: what --json prints (a stream's one document per line; `audit message` one document, its story). */
const sourceOptions = (command: Command, jsonHelp = 'one JSON document per line'): Command =>
  command
    .option('--url <url>', 'read the log over HTTP from this server (GET /v1/audit/events) instead of the configured store')
    .option('--token <token>', 'auditor or admin token for --url (prefer MAILBOX_AUDIT_TOKEN: flags show up in ps)')
    .option('--json', `${jsonHelp}, ${JSON_FAILURE}`)
    .option('--no-progress', 'no progress bar (it is only ever drawn on a terminal, on stderr)');

export function registerAuditCommands(program: Command, io: AuditIo = processIo()): void {
  const audit = program
    .command('audit')
    .description("replay the event log, tell a message's or an agent's story, verify the projections against the log")
    .addHelpText(
      'after',
      '\nStores come from MAILBOX_DATA_DIR / MAILBOX_EVENTSTORE_URL / MAILBOX_REDIS_URL, as for `mailbox serve`.\n' +
        'Exit codes: 0 ok, 1 drift / not found / views of another log / the log contradicts itself, 2 usage, configuration or ' +
        'access error, or a views file that cannot be opened (damaged, locked), 3 verify could not settle (the live views ' +
        'moved during every re-check: not known to be drift). See docs/auditors.md.',
    );

  sourceOptions(
    audit
      .command('replay')
      .description('stream the ordered event log (text, or --json lines)')
      .option('--from <position>', 'first log position to show (inclusive)')
      .option('--type <type>', `only these event types (repeat or comma-separate): ${MAILBOX_EVENT_TYPES.join(', ')}`, collect)
      .option('--stream <name>', 'only this stream, e.g. mailbox-agents or mailbox-message-<id>')
      .addHelpText('after', exitCodes('0 shown (none matching included), 1 no event log or --from past its head')),
  ).action((flags: SourceFlags & { from?: string; type?: string[]; stream?: string }) =>
    run(io, flags, async () => {
      const {
        '--from': from,
        '--type': type,
        '--stream': stream,
      } = parseInput(replayFlagsSchema, { '--from': flags.from, '--type': flags.type, '--stream': flags.stream }, 'audit replay');
      const filter = {
        from: from === undefined ? null : BigInt(from),
        types: type ? new Set(type) : null,
        stream: stream ?? null,
      };
      const jsonText = flags.json && flags.url === undefined ? root().openJsonTextLog(commandConfig(io.env)) : null;
      if (jsonText !== null) {
        try {
          await tools().runJsonTextReplay(jsonText, filter, outputOf(flags), io);
          return 0;
        } finally {
          jsonText.close();
        }
      }
      return answeringPastTheHead(filter, flags, io, () =>
        withSource(flags, io, async (source) => {
          const summary = await tools().runReplay(source, filter, outputOf(flags), io);
          if (!flags.json) io.stderr.write(`${replaySummaryLine(summary, filter)}\n`);
          return 0;
        }),
      );
    }),
  );

  sourceOptions(
    audit
      .command('message <messageId>')
      .description(
        'the whole story of one message: sent, audience, delivered, read and archived by whom and when, ' +
          'and its delivery ledger (in view, woken, seen, read, replied per recipient)',
      )
      .addHelpText(
        'after',
        exitCodes('0 told, 1 the log holds no such message (or there is no event log), or its story shows an anomaly'),
      ),
    'the story as one JSON document',
  ).action((messageId: string, flags: SourceFlags) =>
    run(io, flags, async () => {
      const id = parseInput(oneMessageSchema, { messageId }, 'audit message').messageId;
      return withSource(flags, io, (source) => tools().runMessage(source, id, outputOf(flags), io));
    }),
  );

  sourceOptions(
    audit
      .command('unwoken')
      .description(
        'messages that woke none of their recipients within the wake SLA (unless all that were due a wake saw or read them), oldest first (exit 1 when any)',
      )
      .option(
        '--sla <duration>',
        `the wake SLA: 30s, 2m, 1h or milliseconds (default MAILBOX_WAKE_SLA_MS, else ${DEFAULT_WAKE_SLA_MS})`,
      )
      .addHelpText('after', exitCodes('0 none unwoken, 1 some (listed), or no event log')),
  ).action((flags: SourceFlags & { sla?: string }) =>
    run(io, flags, async () => {
      // Keyed as typed, so that an error names '--sla'; the variable is read as serve reads it, in serve's words. Both
      // were 'sla' ("'sla' must be written in plain decimal digits" for MAILBOX_WAKE_SLA_MS=abc, and zod's own "Too
      // big: expected int to be <=9007199254740991" for a long number).
      const { '--sla': sla } = parseInput(
        z.strictObject({ '--sla': SLA_FLAG.optional() }),
        { '--sla': flags.sla },
        'audit unwoken',
      );
      const slaMs = sla ?? commandConfig(io.env, { stores: false }).wakeSlaMs;
      return withSource(flags, io, (source) => tools().runUnwoken(source, new Date(), slaMs, outputOf(flags), io));
    }),
  );

  sourceOptions(
    audit
      .command('agent <identity>')
      .description("an agent's timeline: registered, sent, received, read, archived, and who read what it sent")
      .addHelpText('after', exitCodes('0 told, 1 the log holds nothing about that identity (or there is no event log)')),
  ).action((identity: string, flags: SourceFlags) =>
    run(io, flags, async () => {
      const who = parseInput(z.strictObject({ identity: identitySchema }), { identity }, 'audit agent').identity;
      return withSource(flags, io, (source) => tools().runAgent(source, who, outputOf(flags), io));
    }),
  );

  audit
    .command('verify')
    .description(
      'rebuild every view from the log in scratch memory and diff it against the projections it can read ' +
        "(the Redis views or the SQLite views file; with MAILBOX_VIEWS=memory, views this process builds, not the server's " +
        'in-memory ones); exit 1 on drift',
    )
    // Its exit codes were only in `mailbox audit --help`: a script reading 3 (the live views moved during every re-check)
    // as an unknown failure could not learn it here.
    .addHelpText(
      'after',
      '\nPrints what it compared: "OK: ... at checkpoint N of log head N; E events rebuilt, A agents, L listing entries, ' +
        'D delivery ledgers and H task history lines compared", or one line per difference (view, agent, message, field, what the log says, what ' +
        'the live projection has) and "DRIFT: ...".\nExit codes: 0 the views match the log; 1 drift, no views, or views ' +
        'of another log; 2 usage, configuration or access error, or a views file that cannot be opened (damaged, locked); ' +
        '3 could not settle (the live views moved during every re-check, under load: neither confirmed nor cleared, ' +
        'run it again). See docs/auditors.md.',
    )
    .option('--json', `the report as one JSON document, ${JSON_FAILURE}`)
    .option('--no-progress', 'no progress bar')
    // Hidden from --help (verify cannot work over HTTP) but still answered with the explanation rather than "unknown option".
    .addOption(new Option('--url <url>').hideHelp())
    .action((flags: SourceFlags) =>
      run(io, flags, async () => {
        if (flags.url !== undefined) {
          throw new MailboxError(
            'VALIDATION_FAILED',
            'Not available over HTTP',
            'verify compares every view of every agent and needs direct store access; run it where MAILBOX_* points at the stores.',
            { field: '--url' },
          );
        }
        const config = commandConfig(io.env);
        // verify reads the log: a missing one is refused, not created and found empty; a SQLite file that is no log is said
        // as such first (it was 'No views': the operator started a server to build them, and met the log's refusal there).
        const sqliteLog = root().openJsonTextLog(config);
        if (sqliteLog === null) root().requireExistingLog(config);
        else sqliteLog.close();
        refuseMissingViews(config); // nor are the views made: opening a missing views file creates it, empty
        const pipeline = await root().openPipeline(config, logger(io), 'auto', { readOnlyLog: true }); // verify only reads the log
        try {
          // With MAILBOX_VIEWS=memory the server's views live only in its memory: this process cannot see them, so it must not
          // claim to have checked them. It checks what it can: views its own projector built from the log, against a scratch rebuild.
          const views = root().viewsAreInMemory(config)
            ? "views built from the log by this process's projector (the running server's in-memory views cannot be read from " +
              `here; ${root().sqliteViewsRemedy(config)} for the SQLite views file, which verify can read)`
            : undefined;
          // Another log's views: said so, not diffed; views of no log (none built): no views, as a missing file.
          if ((await requireViewsOfThisLog(pipeline.eventStore, pipeline.projections)) === 'unclaimed') {
            refuseUnclaimedViews(config);
          }
          // The unwoken alarm is compared as the server counts it: sent before now minus its wake SLA.
          const settings = { wakeSlaMs: config.wakeSlaMs };
          return (
            await tools().runVerify(
              eventStoreSource(pipeline.eventStore),
              pipeline.projections,
              outputOf(flags),
              io,
              views,
              settings,
            )
          ).code;
        } finally {
          await pipeline.close();
        }
      }),
    );
}
