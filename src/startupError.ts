import type { ErrorCode } from './errors';

/**
 * A startup failure the operator can fix (bad configuration, a port in use, views of another log):
 * the CLI prints its message as one line, without a stack trace, and exits with code 2.
 * The message names the variable or resource, the bad value and the fix.
 */
export class StartupError extends Error {
  readonly exitCode = 2;
  /**
   * What the commands that answer in JSON envelopes (`mailbox audit`, `mailbox projections`) call this refusal: its
   * title and code (a damaged views file: 'Views file damaged', UNAVAILABLE). Unset: a configuration error when the
   * details name a variable, else 'Refused at start' (startupRefusal in src/cli/commands/commandConfig.ts).
   */
  readonly refusal?: { error: string; code: ErrorCode };
  /**
   * What the operator is told before the refusal's line, one `mailbox: warning:` line each (bin/mailbox.js): the
   * warnings a start that went on would have logged but that this refusal came before (a misspelled variable).
   */
  readonly warnings: readonly string[];

  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown; refusal?: { error: string; code: ErrorCode }; warnings?: readonly string[] },
  ) {
    super(message, options);
    this.name = 'StartupError';
    if (options?.refusal) this.refusal = options.refusal;
    this.warnings = options?.warnings ?? [];
  }
}

export const isStartupError = (value: unknown): value is StartupError => value instanceof StartupError;

/**
 * Start-up given up because the process was asked to stop (SIGTERM, Ctrl-C) before it served: at the next step
 * (a batch of the views' catch-up, a wait for a backend), not once a catch-up of the whole log is over. What was
 * done stays: the views keep every batch they committed, and the next start resumes from there.
 */
export class StartupInterrupted extends Error {
  constructor(readonly during: string) {
    super(`start-up stopped ${during}`);
    this.name = 'StartupInterrupted';
  }
}
