/**
 * The audit commands as functions of (log source, options, io) -> exit code,
 * so that the CLI, tests and benchmarks run exactly the same code.
 * Exit codes: 0 ok, 1 drift or not found, 2 usage or access errors (CLI).
 */
import { MailboxError } from '../errors';
import type { ProjectionStore } from '../projections/projectionStore';
import { formatTimelineEntry } from './agentTimeline';
import { agentTimeline, loadMessageStory } from './auditReads';
import { isTty, writeOut, type AuditIo } from './auditOutput';
import { eventJsonLine, eventTextLine } from './eventFormat';
import type { JsonTextLog, LogSource } from './logSource';
import { formatMessageStory } from './messageStory';
import { formatLedger, formatUnwoken, replayLedger, wholeLedger } from './ledgerReplay';
import { progressBar } from './progress';
import { replayJsonText, replayLog, type ReplayFilter, type ReplaySummary } from './replay';
import { formatDifference } from './verify/viewDiff';
import { verifyProjections, type VerifyReport } from './verify/verifyProjections';

export interface OutputOptions {
  json: boolean;
  progress: boolean;
}

const bar = async (source: LogSource, io: AuditIo, options: OutputOptions, label: string) =>
  progressBar(io.stderr as NodeJS.WriteStream, options.progress && isTty(io.stderr), label, await source.head());

/**
 * A replay that names what the log does not hold is "not found" (exit 1), never an empty answer that reads like
 * an empty range: a misspelt --stream printed "0 of 0 events shown" and exited 0. A stream that exists but has
 * nothing that --from and --type keep is an empty range: exit 0.
 */
function refuseMissing(filter: ReplayFilter, summary: ReplaySummary): ReplaySummary {
  if (filter.stream !== null && summary.streamFound === false) {
    throw new MailboxError(
      'NOT_FOUND',
      'Stream not found',
      `The log holds no stream '${filter.stream}'. Streams are mailbox-agents, mailbox-deliveries, ` +
        'mailbox-message-<messageId>, mailbox-task-<messageId>, mailbox-seen-<identity>, ...: ' +
        "`mailbox audit replay --json` shows each event's streamName.",
      { field: '--stream', stream: filter.stream },
    );
  }
  return summary;
}

export async function runReplay(
  source: LogSource,
  filter: ReplayFilter,
  options: OutputOptions,
  io: AuditIo,
): Promise<ReplaySummary> {
  const progress = await bar(source, io, options, 'replay');
  const line = options.json ? eventJsonLine : eventTextLine;
  try {
    return refuseMissing(
      filter,
      await replayLog(
        source,
        filter,
        (events) => {
          let text = '';
          for (const event of events) text += `${line(event)}\n`;
          return writeOut(io.stdout, text);
        },
        progress.update,
      ),
    );
  } finally {
    progress.stop();
  }
}

/** `replay --json` straight from a JSON text log (the SQLite file): the same lines as runReplay, without the parse/stringify round trip. */
export async function runJsonTextReplay(
  log: JsonTextLog,
  filter: ReplayFilter,
  options: OutputOptions,
  io: AuditIo,
): Promise<ReplaySummary> {
  const progress = progressBar(io.stderr as NodeJS.WriteStream, options.progress && isTty(io.stderr), 'replay', log.head());
  try {
    return refuseMissing(filter, await replayJsonText(log, filter, (text) => writeOut(io.stdout, text), progress.update));
  } finally {
    progress.stop();
  }
}

export async function runMessage(source: LogSource, messageId: string, options: OutputOptions, io: AuditIo): Promise<number> {
  const story = await loadMessageStory(source, messageId);
  if (story === null) {
    throw new MailboxError(
      'MESSAGE_NOT_FOUND',
      'Message not found',
      `The log holds no message ${messageId}; message ids are UUIDs as returned by a send (see \`mailbox audit replay --type MessageSent\`).`,
      { messageId },
    );
  }
  // The delivery ledger (issue 13): replayed from the whole log (replies and wakes live in other streams).
  const delivery = wholeLedger(await replayLedger(source), messageId) ?? null;
  const text = options.json
    ? JSON.stringify({ ...story, delivery })
    : `${formatMessageStory(story)}${delivery ? `\n${formatLedger(delivery)}` : ''}`;
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
  const progress = await bar(source, io, options, 'unwoken');
  let ledger;
  try {
    ledger = await replayLedger(source, progress.update);
  } finally {
    progress.stop();
  }
  const sentBefore = new Date(now.getTime() - slaMs).toISOString();
  const { messages } = ledger.unwoken({ sentBefore, limit: Number.MAX_SAFE_INTEGER, pendingOnly: false });
  const lines = messages.map((m) => (options.json ? JSON.stringify(m) : formatUnwoken(m)));
  if (!options.json) lines.push(`${messages.length} message(s) woke nobody within ${slaMs} ms.`);
  await writeOut(io.stdout, `${lines.join('\n')}\n`);
  return messages.length > 0 ? 1 : 0;
}

export async function runAgent(source: LogSource, identity: string, options: OutputOptions, io: AuditIo): Promise<number> {
  const progress = await bar(source, io, options, `timeline ${identity}`);
  let found = 0;
  try {
    await agentTimeline(
      source,
      identity,
      (entries) => {
        found += entries.length;
        return writeOut(io.stdout, entries.map((e) => `${options.json ? JSON.stringify(e) : formatTimelineEntry(e)}\n`).join(''));
      },
      progress.update,
    );
  } finally {
    progress.stop();
  }
  if (found === 0) {
    throw new MailboxError(
      'AGENT_NOT_FOUND',
      'Agent not found',
      `The log holds nothing about ${identity}; list identities with \`mailbox audit replay --type AgentRegistered\`.`,
      { identity },
    );
  }
  return 0;
}

/** What the views under test are, for the summary line; the CLI says more precisely when it cannot see the server's. */
export const LIVE_PROJECTIONS = 'the live projections';

function verifySummary(report: VerifyReport, views: string): string {
  const where =
    `at checkpoint ${report.comparedAt ?? '(empty)'} of log head ${report.head ?? '(empty)'}` +
    `${report.lag && report.lag !== '0' ? ` (live views ${report.lag} positions behind; not drift)` : ''}`;
  const scope = `${report.eventsRebuilt} events rebuilt, ${report.agentsCompared} agents and ${report.entriesCompared} listing entries compared`;
  return report.ok
    ? `OK: ${views} match the log ${where}; ${scope}.`
    : `DRIFT: ${report.differences.length} difference${report.differences.length === 1 ? '' : 's'} ${where}; ${scope}.`;
}

export async function runVerify(
  source: LogSource,
  live: ProjectionStore,
  options: OutputOptions,
  io: AuditIo,
  views = LIVE_PROJECTIONS,
): Promise<{ code: number; report: VerifyReport }> {
  const progress = await bar(source, io, options, 'rebuild');
  let report: VerifyReport;
  try {
    report = await verifyProjections(source, live, { onProgress: progress.update });
  } finally {
    progress.stop();
  }
  if (options.json) await writeOut(io.stdout, `${JSON.stringify(report)}\n`);
  else await writeOut(io.stdout, [...report.differences.map(formatDifference), verifySummary(report, views)].join('\n') + '\n');
  return { code: report.ok ? 0 : 1, report };
}
