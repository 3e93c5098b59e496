/**
 * Errors across the views thread's boundary: an Error loses its class when it
 * is posted, and the projector acts on the class (a rewound checkpoint is
 * resumed from, views of another log stop it, a MailboxError keeps its
 * envelope). Each is described by name and fields there and rebuilt here as
 * the same class; any other error keeps its message, name and SQLite code.
 */
import { MailboxError, type ErrorEnvelope } from '../../../errors';
import { ProjectionCheckpointRewound, ViewsOfAnotherLog } from '../../../projections/projectionStore';

export type ThreadError =
  | { kind: 'rewound'; checkpoint: bigint | null; expected: bigint | null }
  | { kind: 'anotherLog'; location: string; owner: string | null; logIdentity: string }
  | { kind: 'mailbox'; envelope: ErrorEnvelope }
  | { kind: 'other'; name: string; message: string; code?: string; stack?: string };

export function describeThreadError(error: unknown): ThreadError {
  if (error instanceof ProjectionCheckpointRewound)
    return { kind: 'rewound', checkpoint: error.checkpoint, expected: error.expected };
  if (error instanceof ViewsOfAnotherLog)
    return { kind: 'anotherLog', location: error.location, owner: error.owner, logIdentity: error.logIdentity };
  if (error instanceof MailboxError) return { kind: 'mailbox', envelope: error.envelope };
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      kind: 'other',
      name: error.name,
      message: error.message,
      code: typeof code === 'string' ? code : undefined,
      stack: error.stack,
    };
  }
  return { kind: 'other', name: 'Error', message: String(error) };
}

export function rebuildThreadError(error: ThreadError): Error {
  switch (error.kind) {
    case 'rewound':
      return new ProjectionCheckpointRewound(error.checkpoint, error.expected);
    case 'anotherLog':
      return new ViewsOfAnotherLog(error.location, error.owner, error.logIdentity);
    case 'mailbox': {
      const { error: title, code, message, ...details } = error.envelope;
      return new MailboxError(code, title, message, details);
    }
    case 'other': {
      const rebuilt = new Error(error.message) as Error & { code?: string };
      rebuilt.name = error.name;
      if (error.code !== undefined) rebuilt.code = error.code;
      if (error.stack !== undefined) rebuilt.stack = `${error.stack}\n    (in the SQLite views thread)`;
      return rebuilt;
    }
  }
}
