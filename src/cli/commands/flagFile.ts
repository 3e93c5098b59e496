/**
 * A file a flag names (`--body-file notes.md`, `--agents-file agents.json`), read whole. One that cannot be read (no
 * such file, a directory, no permission) is a one-line error naming the flag, the path and why, never Node's stack.
 */
import fs from 'node:fs';
import { MailboxError } from '../../errors';

/** Why a read failed, in words: `there is no such file`, `it is a directory, not a file`. */
export function unreadableReason(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'ENOENT':
      return 'there is no such file';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    case 'EISDIR':
      return 'it is a directory, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return code ? `${code}: ${message}` : String(error);
  }
}

/**
 * The bytes of `file` (0: stdin). A failure throws VALIDATION_FAILED `<what> cannot be read: <why>; <remedy>`, `what`
 * naming the flag and the path as the user typed them (`--body-file '/tmp'`), `field` the flag.
 */
export function readFlagFile(
  file: string | 0,
  what: string,
  { field, remedy, title = 'Validation failed' }: { field: string; remedy: string; title?: string },
): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new MailboxError('VALIDATION_FAILED', title, `${what} cannot be read: ${unreadableReason(error)}; ${remedy}`, {
      field,
      ...(file === 0 ? {} : { path: file }),
    });
  }
}
