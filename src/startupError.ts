/**
 * A startup failure the operator can fix (bad configuration, a port in use, views of another log):
 * the CLI prints its message as one line, without a stack trace, and exits with code 2.
 * The message names the variable or resource, the bad value and the fix.
 */
export class StartupError extends Error {
  readonly exitCode = 2;

  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartupError';
  }
}

export const isStartupError = (value: unknown): value is StartupError => value instanceof StartupError;
