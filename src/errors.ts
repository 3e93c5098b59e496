/**
 * One error envelope for every surface (HTTP, MCP, CLI, library):
 * { error: <short title>, code: <UPPER_SNAKE>, message: <one actionable sentence>, ...details }.
 */
export const ERROR_STATUS = {
  INVALID_RECIPIENT_SHAPE: 400,
  UNKNOWN_RECIPIENT: 404,
  UNKNOWN_FIELD: 400,
  FILTER_NOT_APPLICABLE: 400,
  VALIDATION_FAILED: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_A_RECIPIENT: 403,
  MESSAGE_NOT_FOUND: 404,
  AGENT_EXISTS: 409,
  AGENT_NOT_FOUND: 404,
  CONCURRENCY_CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  CURSOR_MISMATCH: 400,
  TASK_ALREADY_CLAIMED: 409,
  NOT_IN_AUDIENCE: 403,
  INVALID_TRANSITION: 409,
  TASK_NOT_FOUND: 404,
  /** A claimant's lease on a task lapsed: the task went back to its audience. */
  LEASE_EXPIRED: 409,
  RATE_LIMITED: 429,
  /** HTTP a parser refuses: a request line, header, URL encoding or chunked body that is not valid HTTP/1.1. */
  MALFORMED_REQUEST: 400,
  URI_TOO_LONG: 414,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  /**
   * Never an answer: recorded (the rejections, /metrics) of a request whose client closed the connection before the
   * whole of it arrived (nginx's 499), so that it is not counted as a request the server refused.
   */
  CLIENT_CLOSED_REQUEST: 499,
  UNAVAILABLE: 503,
  NOT_FOUND: 404,
  /** The path is a route, the method is not one of it (the answer's Allow header and message name those that are). */
  METHOD_NOT_ALLOWED: 405,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorEnvelope {
  error: string;
  code: ErrorCode;
  message: string;
  [detail: string]: unknown;
}

export class MailboxError extends Error {
  readonly envelope: ErrorEnvelope;

  constructor(code: ErrorCode, title: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'MailboxError';
    this.envelope = { error: title, code, message, ...details };
  }

  get code(): ErrorCode {
    return this.envelope.code;
  }

  get status(): number {
    return ERROR_STATUS[this.envelope.code];
  }

  toJSON(): ErrorEnvelope {
    return this.envelope;
  }
}

export const isMailboxError = (value: unknown): value is MailboxError => value instanceof MailboxError;

/** Thrown by event store adapters when the expected revision does not hold. */
export class ConcurrencyConflict extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`Stream ${streamName}: expected revision ${expected}, actual ${actual}`);
    this.name = 'ConcurrencyConflict';
  }
}

/**
 * Thrown by adapters when their backing service cannot be reached in time. The
 * cause stays on the error (`error.cause`, for the log) and out of the envelope:
 * a caller can act on "retry later", not on a driver's wording.
 */
export const unavailable = (what: string, cause?: unknown): MailboxError => {
  const error = new MailboxError(
    'UNAVAILABLE',
    'Service unavailable',
    `${what} is unavailable; retry later (the request was not applied).`,
  );
  if (cause !== undefined) (error as Error).cause = cause;
  return error;
};

/** The cause of an error as one line for the log (never for a response). */
export const causeOf = (error: unknown): string | undefined => {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Error ? cause.message : cause === undefined ? undefined : String(cause);
};

/**
 * How long a client refused UNAVAILABLE (503) is told to wait before it retries, when the refusal names no time of its
 * own: a Redis or event store outage, views being rebuilt, a node not ready or shutting down. Each lasts seconds when it
 * heals by itself; a client told nothing retried at once, adding to the load of a node that was already struggling.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The seconds a refusal tells its client to wait before retrying (HTTP's Retry-After, the envelope's
 * retryAfterSeconds): the refusal's own (RATE_LIMITED's), else the default of a 503; null for a refusal that retrying
 * later does not mend.
 */
export function retryAfterSecondsOf(error: MailboxError): number | null {
  const stated = error.envelope.retryAfterSeconds;
  if (typeof stated === 'number') return stated;
  if (needsOperator(error)) return null; // no retry mends it: told every 5 s, a client retried forever

  return error.code === 'UNAVAILABLE' ? UNAVAILABLE_RETRY_AFTER_SECONDS : null;
}

/**
 * A 503 no retry cures until an operator acts (the views are another log's, the log was replaced under the server,
 * the views file is damaged): titled OPERATOR_NEEDED_TITLE, its `operatorAction` names the remedy, and it carries no
 * Retry-After nor retryAfterSeconds (a client and a model stop and report it, instead of retrying every 5 s forever).
 */
export const OPERATOR_NEEDED_TITLE = 'Operator action needed';

export const operatorNeeded = (message: string, operatorAction: string, details: Record<string, unknown> = {}): MailboxError =>
  new MailboxError('UNAVAILABLE', OPERATOR_NEEDED_TITLE, message, { ...details, operatorAction });

export const needsOperator = (error: MailboxError): boolean => typeof error.envelope.operatorAction === 'string';

/** The envelope as a client is answered: one to retry later says when (retryAfterSeconds), as its Retry-After does. */
export function answeredEnvelope(error: MailboxError): ErrorEnvelope {
  const retryAfterSeconds = retryAfterSecondsOf(error);
  return retryAfterSeconds === null || error.envelope.retryAfterSeconds === retryAfterSeconds
    ? error.envelope
    : { ...error.envelope, retryAfterSeconds };
}

/** A request that outlived its deadline. Honest about writes: a command may still be applied, and the message says how to find out safely. */
export const requestTimedOut = (timeoutMs: number): MailboxError =>
  new MailboxError(
    'UNAVAILABLE',
    'Timed out',
    `The request did not complete within ${timeoutMs} ms. A send may still be applied: retry it with the same ` +
      'Idempotency-Key (it will not be sent twice), or check your outbox.',
    { timeoutMs },
  );
