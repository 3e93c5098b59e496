/**
 * Where bytes stop being UTF-8. Decoding them leniently (Buffer#toString, fs.readFileSync(file, 'utf8')) replaces
 * each invalid sequence with U+FFFD without a word; the mailbox refuses such input instead, naming the byte.
 */
import { isUtf8 } from 'node:buffer';

const REPLACEMENT = '\uFFFD';
const ENCODED_REPLACEMENT = Buffer.from(REPLACEMENT, 'utf8');

/**
 * The byte offset of the first sequence that is not UTF-8, or -1. The lenient decoding marks each one with U+FFFD;
 * the bytes before it decoded as they were, so they re-encode to the same length. A U+FFFD sent as such
 * (EF BF BD) is no error and is passed over.
 */
export function firstInvalidUtf8Offset(bytes: Buffer): number {
  if (isUtf8(bytes)) return -1;
  const text = bytes.toString('utf8');
  let offset = 0;
  let from = 0;
  for (let at = text.indexOf(REPLACEMENT); at !== -1; at = text.indexOf(REPLACEMENT, at + 1)) {
    offset += Buffer.byteLength(text.slice(from, at), 'utf8');
    from = at;
    if (!bytes.subarray(offset, offset + 3).equals(ENCODED_REPLACEMENT)) return offset;
  }
  return -1; // not reached: isUtf8 said some sequence is invalid
}

/** `byte 0xE9 at offset 41`: the first invalid byte of `bytes`, as the errors name it. */
export const invalidByteAt = (bytes: Buffer, offset: number): string =>
  `byte 0x${bytes[offset].toString(16).toUpperCase().padStart(2, '0')} at offset ${offset}`;

/**
 * The bytes as text when they are UTF-8; otherwise throws what `refuse` makes of the problem ('byte 0xE9 at offset
 * 3 is not part of a UTF-8 character') and its offset: each surface words its own remedy.
 */
export function strictUtf8Text(bytes: Buffer, refuse: (problem: string, offset: number) => Error): string {
  const offset = firstInvalidUtf8Offset(bytes);
  if (offset === -1) return bytes.toString('utf8');
  throw refuse(`${invalidByteAt(bytes, offset)} is not part of a UTF-8 character`, offset);
}
