import crypto from 'node:crypto';

/** Fixed namespace: ids derived from it must never change between releases. */
const NAMESPACE = '5b7d2a3e-8f0c-4c1e-9a55-2f6c0d8e4b71';
const NAMESPACE_BYTES = Buffer.from(NAMESPACE.replaceAll('-', ''), 'hex');

/**
 * A name-based UUID, version 5 (RFC 9562 section 5.5): SHA-1 of the namespace's 16 bytes and the name's UTF-8.
 *
 * Why not the `uuid` package's v5, which gives the same ids (test/unit/eventIds.unit.test.ts compares them): every
 * send derives two or three of these, and its v5 (the namespace parsed again, the name encoded to bytes in JS, a Hash
 * object per call) was 8-12% of the event loop's CPU per send. Here the namespace is parsed once, the name is written
 * into a reused buffer behind it, and one-shot `crypto.hash` (Node >= 20.12, package.json's engines) hashes it without
 * a Hash object.
 */
let scratch = Buffer.alloc(1024);
NAMESPACE_BYTES.copy(scratch);

/** The variant's hex digit: the two top bits of byte 8 set to 10. */
const VARIANT = ['8', '9', 'a', 'b'];

function uuidV5(name: string): string {
  const needed = 16 + Buffer.byteLength(name, 'utf8');
  if (needed > scratch.length) {
    scratch = Buffer.alloc(Math.max(needed, scratch.length * 2));
    NAMESPACE_BYTES.copy(scratch);
  }
  const length = 16 + scratch.write(name, 16, 'utf8');
  const hex = crypto.hash('sha1', scratch.subarray(0, length), 'hex');
  const variant = VARIANT[parseInt(hex[16], 16) & 0x3];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Event ids are derived from the command id and the event's index, so a
 * retried append of the same decision carries the same ids and the store
 * de-duplicates it.
 */
export const deterministicEventId = (commandId: string, index: number): string => uuidV5(`${commandId}#${index}`);

/** Message ids: from the sender's Idempotency-Key when given, else from the command id. */
export const deterministicMessageId = (sender: string, idempotencyKey: string | null, commandId: string): string =>
  uuidV5(idempotencyKey === null ? `command:${commandId}` : `idem:${sender}:${idempotencyKey}`);
