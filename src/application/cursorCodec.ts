/**
 * Pagination cursors, bound to the listing that issued them. A cursor carries
 * the log position of its page's last entry and an HMAC-SHA256 over that
 * position, the caller and the listing (box and filters), under a server key.
 * A cursor used by another caller, on another box, with other filters, or
 * altered in any byte does not verify: CURSOR_MISMATCH, and the caller starts
 * again. (A bare position was accepted anywhere: an outbox cursor on the inbox
 * silently hid every newer inbox message.)
 *
 * Its first byte says the kind of listing that issued it (signed with the rest): a cursor used on the other kind is
 * told where it came from and where it was used ("This cursor came from a task listing (GET /v1/tasks, list_tasks)
 * and was used on a message listing ..."), where a message cursor on the tasks said "a message listing" and a task
 * cursor on the messages only "another box, other filters". Cursors issued before the kinds (format 1) still page.
 *
 * The key is derived from the admin token: every API node of a deployment
 * already shares it and it survives restarts, so a cursor issued by one node
 * pages on another and after a restart; rotating the token only makes old
 * cursors start over. Without an admin token (an embedded library in one
 * process) the key is random per process.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MailboxError } from '../errors';

const KEY_LABEL = 'agent-mailbox cursor key v1';
/** Format 1: issued before the kinds, by either listing (still verified by its MAC); then one format per kind. */
const UNKINDED_FORMAT = 1;
const BODY_BYTES = 9; // format byte + position as an unsigned 64-bit integer
const MAC_BYTES = 32;

/** The listings that issue cursors: the format byte of their cursors, and their words for a refused one. */
const LISTINGS = {
  messages: {
    format: 2,
    name: 'message listing',
    where: 'GET /v1/messages, list_messages',
    other: 'another box or other filters',
    chosenBy: 'box and filters',
  },
  tasks: {
    format: 3,
    name: 'task listing',
    where: 'GET /v1/tasks, list_tasks',
    other: 'another view or other states',
    chosenBy: 'view and state',
  },
} as const;

export type ListingKind = keyof typeof LISTINGS;

export interface CursorBinding {
  caller: string;
  kind: ListingKind;
  /** The listing's box and filters in a fixed order (listQueryParser.listingOf). */
  listing: unknown[];
}

export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  static fromAdminToken(adminToken: string | undefined): CursorCodec {
    return new CursorCodec(
      adminToken === undefined ? randomBytes(32) : createHmac('sha256', adminToken).update(KEY_LABEL).digest(),
    );
  }

  encode(binding: CursorBinding, position: bigint): string {
    const body = Buffer.alloc(BODY_BYTES);
    body.writeUInt8(LISTINGS[binding.kind].format, 0);
    body.writeBigUInt64BE(position, 1);
    return Buffer.concat([body, this.mac(body, binding)]).toString('base64url');
  }

  /** The position a cursor stands for, if it was issued for exactly this caller and listing; else CURSOR_MISMATCH. */
  decode(binding: CursorBinding, cursor: string): bigint {
    const bytes = Buffer.from(cursor, 'base64url');
    // Re-encoding must give the cursor back: base64url decoding skips stray characters and ignores the last one's spare bits.
    if (bytes.length !== BODY_BYTES + MAC_BYTES || bytes.toString('base64url') !== cursor) throw cursorMismatch(binding.kind);
    const format = bytes[0];
    const issuedBy = Object.entries(LISTINGS).find(([, listing]) => listing.format === format)?.[0] as ListingKind | undefined;
    if (issuedBy !== undefined && issuedBy !== binding.kind) throw cursorMismatch(binding.kind, issuedBy);
    const body = bytes.subarray(0, BODY_BYTES);
    if (issuedBy === undefined && format !== UNKINDED_FORMAT) throw cursorMismatch(binding.kind);
    if (!timingSafeEqual(bytes.subarray(BODY_BYTES), this.mac(body, binding))) throw cursorMismatch(binding.kind);
    return body.readBigUInt64BE(1);
  }

  private mac(body: Buffer, binding: CursorBinding): Buffer {
    return createHmac('sha256', this.key)
      .update(body)
      .update(JSON.stringify([binding.caller, ...binding.listing]))
      .digest();
  }
}

/**
 * Which listing the cursor came from (the other kind, when its first byte says so; else another of the same kind, or
 * it was altered) and which it was used on, then what to do: the same words on every listing.
 */
export function cursorMismatch(usedOn: ListingKind, issuedBy?: ListingKind): MailboxError {
  const used = LISTINGS[usedOn];
  const from =
    issuedBy === undefined
      ? `another ${used.name} (${used.other}, or another caller's) or was altered, and was used on this one`
      : `a ${LISTINGS[issuedBy].name} (${LISTINGS[issuedBy].where}) and was used on a ${used.name}`;
  return new MailboxError(
    'CURSOR_MISMATCH',
    'Cursor mismatch',
    `This cursor came from ${from} (${used.where}): a cursor pages only the listing that issued it; start again ` +
      `without a cursor, and pass each nextCursor back unchanged with the same ${used.chosenBy}.`,
    { field: 'cursor' },
  );
}
