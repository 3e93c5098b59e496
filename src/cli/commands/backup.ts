/**
 * `mailbox backup <file>`: a copy of the event log taken while the server runs (compositionRoot.backupEventLog, on
 * adapters/eventstore/sqliteBackup.ts), for an operator's backups (cron, before an upgrade). The result is one line
 * on stdout (or one JSON object with --json); progress goes to stderr, once a second, for a log that takes a while.
 * A failure is one line on stderr (`mailbox: <message>`), or with --json one JSON envelope, as `mailbox audit` and
 * `mailbox projections` print them.
 */
import type { Command } from 'commander';
import type { BackupProgress, SqliteLogBackup } from '../../compositionRoot';
import { commandConfig, reportCommandFailure } from './commandConfig';
import { unknownVariables, unknownVariableWarning } from './envWarnings';

export interface BackupIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

const processIo: BackupIo = { stdout: process.stdout, stderr: process.stderr, env: process.env };

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function summary(backup: SqliteLogBackup): string {
  const events = backup.events.toLocaleString('en-US');
  return (
    `backed up the event log ${backup.source} to ${backup.file}: ${events} events, up to position ${backup.head ?? 'none'}, ` +
    `log ${backup.logIdentity ?? '(no identity)'}, ${megabytes(backup.bytes)} in ${(backup.ms / 1000).toFixed(1)} s. ` +
    'It holds every event acknowledged before the backup started; the views are not in it (a server started on it ' +
    'rebuilds them). To restore: docs/operators.md#backups'
  );
}

/**
 * The progress line for a tick of the copy, or null while nothing is copied yet: the copying process may still be
 * starting (on a loaded machine it takes over a second) or be about to find the log unreadable, and a line then said
 * "about 0% (0.0 MB of about 0.0 MB)" above the refusal's envelope.
 */
export function backupProgressLine({ written, estimated }: BackupProgress): { percent: number; text: string } | null {
  if (written === 0) return null;
  const percent = estimated === 0 ? 99 : Math.min(99, Math.floor((written / estimated) * 100));
  return { percent, text: `backup: about ${percent}% (${megabytes(written)} of about ${megabytes(estimated)})` };
}

export async function runBackup(destination: string, flags: { json?: boolean }, io: BackupIo = processIo): Promise<number> {
  // Said first: with MAILBOX_DATA_DIRR=/srv/mailbox, the log of ./data was backed up (or 'no event log') without a word.
  for (const unknown of unknownVariables(io.env)) io.stderr.write(`mailbox: warning: ${unknownVariableWarning(unknown)}\n`);
  const config = commandConfig(io.env);
  // Loaded here, once the settings are read: --help, a usage error or a refused setting do not load the stores.
  const { backupEventLog, BackupInterrupted } = await import('../../compositionRoot');
  // Ctrl-C or SIGTERM: the copying process is killed, its partial copy removed, nothing is left at the destination.
  const stop = new AbortController();
  let signalled: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    signalled ??= signal;
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let lastPercent = -1;
  try {
    const backup = await backupEventLog(config, destination, {
      signal: stop.signal,
      onProgress: (progress) => {
        const line = backupProgressLine(progress);
        if (line === null || line.percent === lastPercent) return;
        lastPercent = line.percent;
        io.stderr.write(`${line.text}\n`);
      },
    });
    const positions = { head: backup.head?.toString() ?? null, headAtStart: backup.headAtStart?.toString() ?? null };
    io.stdout.write(flags.json ? `${JSON.stringify({ ...backup, ...positions })}\n` : `${summary(backup)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof BackupInterrupted)) throw error;
    io.stderr.write(`${error.message} (${signalled})\n`);
    return signalled === 'SIGTERM' ? 143 : 130;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** As the CLI runs it: a failure is one line on stderr (the envelope with --json); exit 1 no log, 2 anything else, 130/143 stopped. */
export async function runBackupCommand(destination: string, flags: { json?: boolean }, io: BackupIo = processIo) {
  let code: number;
  try {
    code = await runBackup(destination, flags, io);
  } catch (caught) {
    code = reportCommandFailure(caught, { stderr: io.stderr, json: flags.json === true }, 'Backup failed');
  }
  process.exitCode = code;
}

export function registerBackupCommand(program: Command): void {
  program
    .command('backup')
    .argument('<file>', 'where the copy goes: a new file (never overwritten) in a directory that exists')
    .description(
      'copy the event log (the SQLite log: MAILBOX_DATA_DIR/events.sqlite or MAILBOX_EVENTSTORE_URL=sqlite:<file>) to ' +
        '<file> while the server runs: every event acknowledged before the backup started, checked',
    )
    .option(
      '--json',
      'print the result as one JSON object, and a failure as the JSON error envelope on stderr (else one line, mailbox: <message>)',
    )
    .addHelpText(
      'after',
      '\nA copy of events.sqlite made with cp while the server runs can miss recent messages (they are in ' +
        'events.sqlite-wal) or be damaged; this one cannot. The views are not copied: they are rebuilt from the log.\n\n' +
        'Restore (docs/operators.md#backups):\n' +
        '  1. stop the server\n' +
        '  2. move events.sqlite, events.sqlite-wal, events.sqlite-shm and views.sqlite* out of MAILBOX_DATA_DIR (keep\n' +
        '     them until the restored mailbox is checked; admin.token stays)\n' +
        '  3. copy the backup to MAILBOX_DATA_DIR/events.sqlite\n' +
        '  4. start the server: it builds the views from the restored log (mailbox audit verify checks them)\n\n' +
        'Exit codes: 0 done, 1 no event log, 2 refused or failed (nothing left at <file>), 130/143 stopped by ' +
        'Ctrl-C/SIGTERM (nothing left at <file>).',
    )
    .action(async (file: string, flags: { json?: boolean }) => runBackupCommand(file, flags));
}
