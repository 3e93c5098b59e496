/**
 * The audit commands as functions of (log source, options, io) -> exit code,
 * so that the CLI, tests and benchmarks run exactly the same code.
 * Exit codes: 0 ok, 1 drift or not found, 2 usage, configuration or access errors (CLI), 3 verify unsettled (views moved throughout).
 */
import { isMailboxError, MailboxError } from '../errors';
import type { StoredEvent } from '../events/types';
import type { ProjectionStore } from '../projections/projectionStore';
import { formatTimelineEntry, type TimelineEntry } from './agentTimeline';
import { agentTimeline, loadMessageStory, messageStreams } from './auditReads';
import { isTty, writeOut, type AuditIo } from './auditOutput';
import { eventJsonLine, eventTextLine } from './eventFormat';
import type { JsonTextLog, LogSource } from './logSource';
import { formatMessageStory, messageStory, type MessageStory } from './messageStory';
import { formatLedger, formatUnwoken, replayLedger, wholeLedger, type Retirements } from './ledgerReplay';
import { noWakeReason } from '../projections/readModel/ledgerRules';
import type { LedgerMemory } from '../projections/readModel/ledgerMemory';
import { progressBar } from './progress';
import { replayJsonText, replayLog, type ReplayFilter, type ReplaySummary } from './replay';
import { formatDifference } from './verify/viewDiff';
import { verifyProjections, type ComparedUnit, type VerifyOptions, type VerifyReport } from './verify/verifyProjections';

export interface OutputOptions {
  json: boolean;
  progress: boolean;
}

const barTo = (io: AuditIo, options: OutputOptions, label: string, head: bigint | null | undefined, unit?: string) =>
  progressBar(io.stderr as NodeJS.WriteStream, options.progress && isTty(io.stderr), label, head, unit);
const bar = async (source: LogSource, io: AuditIo, options: OutputOptions, label: string) =>
  barTo(io, options, label, await source.head());

/**
 * A replay that names what the log does not hold is "not found" (exit 1), never an empty answer that reads like
 * an empty range: a misspelt --stream printed "0 of 0 events shown" and exited 0, and so did a --from past the
 * log head, without a word about the head. A stream that exists but has nothing that --from and --type keep is
 * an empty range: exit 0. `head` is undefined where the source cannot tell it (the API).
 */
function refuseMissing(filter: ReplayFilter, head: bigint | null | undefined, summary: ReplaySummary | null): void {
  if (filter.from !== null && (head === undefined ? summary?.scanned === 0 : head === null || filter.from > head))
    throw new PastTheHead(filter.from, head);
  if (filter.stream !== null && summary?.streamFound === false) {
    throw new MailboxError(
      'NOT_FOUND',
      'Stream not found',
      `The log holds no stream '${filter.stream}'. Streams are mailbox-agents, mailbox-deliveries, ` +
        'mailbox-message-<messageId>, mailbox-task-<messageId>, mailbox-seen-<identity>, ...: ' +
        "`mailbox audit replay --json` shows each event's streamName.",
      { field: '--stream', stream: filter.stream },
    );
  }
}

const RETRY_ONCE_GROWN = 'or run it again once the log has grown.';

/**
 * An impossible request rather than an empty range: no event is at --from or after it, and none is until the log
 * grows there (exit 1, like a stream that is not there). A tail that polls with --from <last + 1> reads exit 1 as
 * "nothing new yet", as grep's 1 is "no line". With --json its envelope is printed; a text replay prints it as its
 * count line (`endOfLog`), the answer it is: nothing shown, and where the log ends.
 */
export class PastTheHead extends MailboxError {
  constructor(
    readonly from: bigint,
    readonly head: bigint | null | undefined,
  ) {
    const retry = RETRY_ONCE_GROWN;
    const message =
      head === undefined
        ? `No event is at position ${from} or after it: the log ends before it (over --url the head is not known: ` +
          `the server's /readyz did not tell it). Give a lower --from, ${retry}`
        : head === null
          ? `Position ${from} is past the log head: the log is empty. Leave --from out, ${retry}`
          : `Position ${from} is past the log head ${head}: no event is there yet. Give --from ${head} or lower, ${retry}`;
    super('NOT_FOUND', 'Past the log head', message, {
      field: '--from',
      from: from.toString(),
      ...(head === undefined ? {} : { head: head?.toString() ?? null }),
    });
  }

  /** Where the log ends, said after a text replay's `0 events shown (<the range asked>)`. */
  get endOfLog(): string {
    const retry = RETRY_ONCE_GROWN;
    return this.head === undefined
      ? `the log ends before position ${this.from} (over --url the head is not known: the server's /readyz did not ` +
          `tell it). Give a lower --from, ${retry}`
      : this.head === null
        ? `the log is empty. Leave --from out, ${retry}`
        : `the log ends at position ${this.head}. Give --from ${this.head} or lower, ${retry}`;
  }
}

function linesIn(text: string): number {
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/**
 * What a replay (or a timeline) read and printed so far, so that one that fails part way (the server stopped, the store
 * went away) says where its output stops: the lines above the error are the log up to there only, not all of it.
 * `timeline`: the agent's, whose command takes no --from (it is run again whole).
 */
function replayedSoFar(timeline: string | null = null) {
  let readThrough: bigint | null = null;
  let shown = 0;
  return {
    printed: (lines: number) => (shown += lines),
    read: (position: bigint) => (readThrough = position),
    /** `caught`, told where the output stops and how to go on, when some of the log was read before it. */
    cutShort(caught: unknown): unknown {
      if (readThrough === null || !(caught instanceof Error)) return caught;
      const next = readThrough + 1n;
      const where =
        timeline === null
          ? ` The replay stopped after log position ${readThrough} (${shown} event${shown === 1 ? '' : 's'} shown above): ` +
            `the output is the log up to #${readThrough} only. Once the log can be read again, run the same command ` +
            `with --from ${next} for the rest.`
          : ` The timeline stopped after log position ${readThrough} (${shown} entr${shown === 1 ? 'y' : 'ies'} shown above): ` +
            `the output is ${timeline}'s timeline in the log up to #${readThrough} only. Once the log can be read again, ` +
            'run the same command for the whole of it.';
      if (!isMailboxError(caught)) return new Error(`${caught.message}${where}`);
      const { error, code, message, ...details } = caught.envelope;
      return new MailboxError(code, error, `${message}${where}`, {
        ...details,
        shownThrough: readThrough.toString(),
        ...(timeline === null ? { resumeFrom: next.toString() } : {}),
      });
    },
  };
}

export async function runReplay(
  source: LogSource,
  filter: ReplayFilter,
  options: OutputOptions,
  io: AuditIo,
): Promise<ReplaySummary> {
  const head = await source.head();
  refuseMissing(filter, head, null); // before reading: a --from past a known head needs no scan to be refused
  const progress = barTo(io, options, 'replay', head);
  // Text columns are aligned by the log head's digits where the source tells it (over the API it does not: a replay
  // streams in constant memory, so it cannot wait for the widest position).
  const width = (head ?? 0n).toString().length;
  const line = options.json ? eventJsonLine : (event: StoredEvent) => eventTextLine(event, width);
  const sofar = replayedSoFar();
  let summary: ReplaySummary;
  try {
    summary = await replayLog(
      source,
      filter,
      async (events) => {
        let text = '';
        for (const event of events) text += `${line(event)}\n`;
        await writeOut(io.stdout, text);
        sofar.printed(events.length);
      },
      (position) => {
        sofar.read(position);
        progress.update(position);
      },
    );
  } catch (caught) {
    throw sofar.cutShort(caught);
  } finally {
    progress.stop();
  }
  refuseMissing(filter, head, summary);
  return summary;
}

/** `replay --json` straight from a JSON text log (the SQLite file): the same lines as runReplay, without the parse/stringify round trip. */
export async function runJsonTextReplay(
  log: JsonTextLog,
  filter: ReplayFilter,
  options: OutputOptions,
  io: AuditIo,
): Promise<ReplaySummary> {
  const head = log.head();
  refuseMissing(filter, head, null);
  const progress = barTo(io, options, 'replay', head);
  const sofar = replayedSoFar();
  let summary: ReplaySummary;
  try {
    summary = await replayJsonText(
      log,
      filter,
      async (text) => {
        await writeOut(io.stdout, text);
        sofar.printed(linesIn(text));
      },
      (position) => {
        sofar.read(position);
        progress.update(position);
      },
    );
  } catch (caught) {
    throw sofar.cutShort(caught);
  } finally {
    progress.stop();
  }
  refuseMissing(filter, head, summary);
  return summary;
}

/** Every message's delivery ledger, replayed from the whole log, with a progress bar on a terminal. */
async function ledgerWithBar(
  source: LogSource,
  io: AuditIo,
  options: OutputOptions,
  label: string,
  retirements?: Retirements,
  onEvent?: (event: StoredEvent) => void,
) {
  const progress = await bar(source, io, options, label);
  try {
    return await replayLedger(source, progress.update, retirements, onEvent);
  } finally {
    progress.stop();
  }
}

const noSuchMessage = (messageId: string) =>
  new MailboxError(
    'MESSAGE_NOT_FOUND',
    'Message not found',
    `The log holds no message ${messageId}; message ids are UUIDs as returned by a send (see \`mailbox audit replay --type MessageSent\`).`,
    { messageId },
  );

export async function runMessage(source: LogSource, messageId: string, options: OutputOptions, io: AuditIo): Promise<number> {
  // The delivery ledger (issue 13) is replayed from the whole log (replies and wakes live in other streams). That is a
  // scan of the whole log, as long as `audit unwoken`'s, so it draws the same bar (it went silent for as long).
  const retirements: Retirements = new Map();
  let story: MessageStory | null;
  let ledger: LedgerMemory;
  if (source.readStream !== null) {
    story = await loadMessageStory(source, messageId); // its streams, read directly: refused before the long scan
    if (story === null) throw noSuchMessage(messageId);
    ledger = await ledgerWithBar(source, io, options, 'ledger', retirements);
  } else {
    // Over the API, which serves the log but no stream, the story's events come from the ledger's scan: they were read
    // in a scan of their own first, with no bar, as long as the ledger's (half of the run, silent; and twice the reads).
    const streams = new Set(messageStreams(messageId));
    const events: StoredEvent[] = [];
    const keep = (event: StoredEvent) => void (streams.has(event.streamName) && events.push(event));
    ledger = await ledgerWithBar(source, io, options, 'ledger', retirements, keep);
    story = messageStory(events);
    if (story === null) throw noSuchMessage(messageId);
  }
  const delivery = wholeLedger(ledger, messageId) ?? null;
  // The recipients retired (when, at which position), as the text marks them on their rows.
  const retiredRecipients = Object.fromEntries(
    (delivery?.rows ?? []).flatMap((row) => {
      const retired = retirements.get(row.recipient);
      return retired === undefined ? [] : [[row.recipient, retired]];
    }),
  );
  // Why no wake was due, as GET /v1/messages/{id}/delivery and `mailbox delivery` say it (the same rule's words).
  const noWake =
    delivery === null || delivery.message.wakeExpected
      ? null
      : noWakeReason({
          recipients: story.audience,
          wakeSuppressed: story.sent.wakeSuppressed,
          broadcastSender: story.sent.isBroadcast ? story.sent.from : null,
        });
  const text = options.json
    ? JSON.stringify({
        ...story,
        delivery: delivery && { ...delivery, ...(noWake ? { noWakeReason: noWake } : {}) },
        retiredRecipients,
      })
    : `${formatMessageStory(story)}${delivery ? `\n${formatLedger(delivery, retirements, noWake)}` : ''}`;
  await writeOut(io.stdout, `${text}\n`);
  return story.anomalies.length > 0 ? 1 : 0;
}

/**
 * The unwoken alarm from the log (issue 13): messages that expected a wake and woke none of their recipients,
 * sent more than `slaMs` before `now`, oldest first. Exit 1 when there is any (an alarm), else 0.
 */
export async function runUnwoken(
  source: LogSource,
  now: Date,
  slaMs: number,
  options: OutputOptions,
  io: AuditIo,
): Promise<number> {
  const ledger = await ledgerWithBar(source, io, options, 'unwoken');
  const sentBefore = new Date(now.getTime() - slaMs).toISOString();
  const { messages } = ledger.unwoken({ sentBefore, limit: Number.MAX_SAFE_INTEGER, pendingOnly: false });
  const lines = messages.map((m) => (options.json ? JSON.stringify(m) : formatUnwoken(m)));
  // What was counted, and what was not: "0 message(s) woke nobody" was false of a log whose recipients poll (mail they
  // read woke nobody and needs no wake), and "1 message(s)" undercounted where two had woken nobody.
  if (!options.json)
    lines.push(
      `${messages.length} message(s) in the unwoken alarm: each expected a wake, woke none of its recipients within ` +
        `${slaMs} ms, and has a recipient due a wake that neither saw nor read it (mail that every recipient due a wake ` +
        'saw or read needs no wake; mail sent with wakeSuppressed, or to no registered agent, expects none: neither is ' +
        'counted).',
    );
  // One line each (no line at all for no message: --json is JSON lines, and a blank line is not a JSON document).
  await writeOut(io.stdout, lines.map((line) => `${line}\n`).join(''));
  return messages.length > 0 ? 1 : 0;
}

export async function runAgent(source: LogSource, identity: string, options: OutputOptions, io: AuditIo): Promise<number> {
  const head = await source.head();
  const progress = barTo(io, options, `timeline ${identity}`, head);
  // The text's columns are aligned by the widest position: the log head's, where the source tells it (no position
  // shown is past it, so the lines stream as they are found); over the API, which does not tell it, the widest
  // shown, so the agent's lines are held until the end.
  const hold = !options.json && head === undefined;
  const held: TimelineEntry[] = [];
  const text = (entries: TimelineEntry[], width: number) => entries.map((e) => `${formatTimelineEntry(e, width)}\n`).join('');
  let found = 0;
  // Entries per kind, for the summary line on stderr (as replay's "N of M events shown"): the timeline ended with its
  // last entry, so an auditor counting an agent's sends or reads counted lines by hand.
  const byKind = new Map<string, number>();
  const sofar = replayedSoFar(identity);
  let caseVariants: string[];
  try {
    ({ caseVariants } = await agentTimeline(
      source,
      identity,
      async (entries) => {
        found += entries.length;
        for (const entry of entries) byKind.set(entry.kind, (byKind.get(entry.kind) ?? 0) + 1);
        if (hold) return void held.push(...entries); // printed at the end: none shown if it fails
        await writeOut(
          io.stdout,
          options.json ? entries.map((e) => `${JSON.stringify(e)}\n`).join('') : text(entries, (head ?? 0n).toString().length),
        );
        sofar.printed(entries.length);
      },
      (position) => {
        if (!hold) sofar.read(position); // held lines are not printed when it fails: nothing is cut short
        progress.update(position);
      },
    ));
  } catch (caught) {
    throw sofar.cutShort(caught);
  } finally {
    progress.stop();
  }
  if (held.length > 0)
    await writeOut(
      io.stdout,
      text(
        held,
        held.reduce((widest, e) => Math.max(widest, e.position.length), 0),
      ),
    );
  if (found === 0) {
    // Identities are case-sensitive and no two differ only in case: name the one meant, never show it instead.
    const variants = caseVariants.length > 0 ? caseVariants.join(' and ') : null;
    throw new MailboxError(
      'AGENT_NOT_FOUND',
      'Agent not found',
      variants === null
        ? `The log holds nothing about ${identity}; list identities with \`mailbox audit replay --type AgentRegistered\`.`
        : `The log holds nothing about ${identity}: ${variants} ${caseVariants.length > 1 ? 'are' : 'is'} registered, ` +
            `which differs only in case (identities are case-sensitive). Did you mean ${caseVariants.join(' or ')}?`,
      { identity, ...(variants === null ? {} : { suggestions: caseVariants }) },
    );
  }
  if (!options.json) {
    const kinds = [...byKind].map(([kind, count]) => `${kind} ${count}`).join(', ');
    const scope = head === undefined ? 'in the log' : `in the log up to position ${head}`;
    io.stderr.write(`${identity}: ${found} ${found === 1 ? 'entry' : 'entries'} (${kinds}) ${scope}\n`);
  }
  return 0;
}

/** What the views under test are, for the summary line; the CLI says more precisely when it cannot see the server's. */
export const LIVE_PROJECTIONS = 'the live projections';

/** "1 agent", "2 agents": a summary an auditor reads aloud. */
function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function verifySummary(report: VerifyReport, views: string): string {
  const where =
    `at checkpoint ${report.comparedAt ?? '(empty)'} of log head ${report.head ?? '(empty)'}` +
    `${report.lag && report.lag !== '0' ? ` (live views ${report.lag} position${report.lag === '1' ? '' : 's'} behind; not drift)` : ''}`;
  const unregistered = report.unregisteredCompared;
  // Mail to a name nobody registered keeps an inbox, compared like an agent's; GET /v1/agents does not list it.
  const identities =
    counted(report.agentsCompared - unregistered, 'agent', 'agents') +
    (unregistered === 0 ? '' : ` and ${counted(unregistered, 'unregistered identity', 'unregistered identities')} with mail`);
  const scope =
    `${counted(report.eventsRebuilt, 'event', 'events')} rebuilt, ${identities}, ` +
    `${counted(report.entriesCompared, 'listing entry', 'listing entries')}, ` +
    `${counted(report.ledgersCompared, 'delivery ledger', 'delivery ledgers')} and ` +
    `${counted(report.historyLinesCompared, 'task history line', 'task history lines')} compared`;
  const differences = counted(report.differences.length, 'difference', 'differences');
  if (report.ok) return `OK: ${views} match the log ${where}; ${scope}.`;
  if (!report.settled)
    return (
      `UNSETTLED: ${differences} neither confirmed nor cleared ${where}: ${views} moved while each re-check read them ` +
      `(a server under a steady load), so they are not known to be drift; run verify again when the load is lighter; ${scope}.`
    );
  return `DRIFT: ${differences} ${where}; ${scope}.`;
}

export async function runVerify(
  source: LogSource,
  live: ProjectionStore,
  options: OutputOptions,
  io: AuditIo,
  views = LIVE_PROJECTIONS,
  settings: Pick<VerifyOptions, 'wakeSlaMs' | 'now'> = {},
): Promise<{ code: number; report: VerifyReport }> {
  let progress = await bar(source, io, options, 'rebuild');
  // After the rebuild, the comparison (about half of a long run, silent after a full bar): a bar per unit it counts.
  let comparing: ComparedUnit | null = null;
  const onCompared = (what: ComparedUnit, done: number, total: number) => {
    if (what !== comparing) {
      progress.stop();
      progress = barTo(io, options, what === 'rechecks' ? 'recheck' : 'compare', BigInt(total), what);
      comparing = what;
    }
    progress.update(BigInt(done));
  };
  // The rebuild's bar only: a re-check catches the scratch views up again, while a compare bar is drawn.
  const onProgress = (position: bigint) => comparing === null && progress.update(position);
  let report: VerifyReport;
  try {
    report = await verifyProjections(source, live, { ...settings, onProgress, onCompared });
  } finally {
    progress.stop();
  }
  if (options.json) await writeOut(io.stdout, `${JSON.stringify(report)}\n`);
  else await writeOut(io.stdout, [...report.differences.map(formatDifference), verifySummary(report, views)].join('\n') + '\n');
  return { code: report.ok ? 0 : report.settled ? 1 : 3, report };
}
