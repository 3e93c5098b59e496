/**
 * `mailbox heartbeat` watches the log and the views of a mailbox server: it starts only where a server has made them.
 * Opening a missing SQLite log creates it (a new log, with a new identity) and opening a missing views file creates
 * an empty one: on an empty or mistyped MAILBOX_DATA_DIR the daemon made both, then watched a log nobody writes
 * (no agents, never a stall) and reported all well. A memory log is out of reach of a process of its own (the one
 * it would open is new and empty). Each is refused at start, as one line (exit code 2, as the heartbeat's other
 * startup refusals), before anything is opened or created.
 */
import { missingSqliteLog, missingSqliteViewsFile, sqliteLogFile } from '../../compositionRoot';
import type { MailboxConfig } from '../../config';
import { StartupError } from '../../startupError';

const NOTHING_CREATED = 'Nothing was created.';

/** `ownsViews`: the daemon runs its own projector on the views (--projector on): it builds them, as a server does. */
export function refuseStoresNoServerMade(config: MailboxConfig, { ownsViews }: { ownsViews: boolean }): void {
  if (config.eventStoreUrl === 'memory:') {
    throw new StartupError(
      'MAILBOX_EVENTSTORE_URL is memory:, a log that lives only in the memory of the server that writes it: the heartbeat ' +
        'runs in a process of its own, where that log is out of reach (the one it would open is new and always empty). ' +
        'Run the heartbeat in the server (mailbox serve --heartbeat), or run the server on a log this process can read: ' +
        'SQLite (unset MAILBOX_EVENTSTORE_URL for MAILBOX_DATA_DIR/events.sqlite, or sqlite:<file>) or EventStoreDB. ' +
        NOTHING_CREATED,
      { variable: 'MAILBOX_EVENTSTORE_URL' },
    );
  }
  const log = missingSqliteLog(config);
  if (log !== null) {
    throw new StartupError(
      `There is no event log at ${log.file} (${log.chosenBy}); check ${log.variable}: the heartbeat watches the log and ` +
        'the views of a mailbox server and creates neither (mailbox serve creates them at its first start). ' +
        NOTHING_CREATED,
      { variable: log.variable, file: log.file },
    );
  }
  const views = ownsViews ? null : missingSqliteViewsFile(config);
  if (views !== null) {
    const file = sqliteLogFile(config);
    const of = file === null ? 'the EventStoreDB log (MAILBOX_EVENTSTORE_URL)' : `the log ${file}`;
    throw new StartupError(
      `There is no views file at ${views}: ${of} has no views yet (no server has started on it, or the file was ` +
        "deleted while it was stopped), or its server keeps them in Redis: give the heartbeat the server's " +
        'MAILBOX_REDIS_URL. The heartbeat reads the views the server keeps and creates none: start the server ' +
        '(mailbox serve), which builds them from the log, then the heartbeat (or run it in the server: mailbox serve ' +
        `--heartbeat). ${NOTHING_CREATED}`,
      { variable: 'MAILBOX_DATA_DIR', viewsFile: views },
    );
  }
}
