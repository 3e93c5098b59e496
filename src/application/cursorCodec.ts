/**
 * Pagination cursors, bound to the listing that issued them. A cursor carries
 * the log position of its page's last entry and an HMAC-SHA256 over that
 * position, the caller and the listing (box and filters), under a server key.
 * A cursor used by another caller, on another box, with other filters, or
 * altered in any byte does not verify: CURSOR_MISMATCH, and the caller starts
 * again. (A bare position was accepted anywhere: an outbox cursor on the inbox
 * silently hid every newer inbox message.)
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
const FORMAT = 1;
const BODY_BYTES = 9; // format byte + position as an unsigned 64-bit integer
const MAC_BYTES = 32;

export interface CursorBinding {
  caller: string;
  /** The listing's box and filters in a fixed order (listQueryParser.listingOf). */
  listing: unknown[];
  /** What the listing is chosen by, for a refusal's words (default messages: box and filters); not signed. */
  chosenBy?: ListingWords;
}

/** How a refused cursor's listing is named: what else it might have been, and what to keep the same. */
export interface ListingWords {
  /** e.g. "another box, other filters" */
  other: string;
  /** e.g. "box and filters" */
  same: string;
}

const MESSAGE_LISTING: ListingWords = { other: 'another box, other filters', same: 'box and filters' };

export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  static fromAdminToken(adminToken: string | undefined): CursorCodec {
    return new CursorCodec(
      adminToken === undefined ? randomBytes(32) : createHmac('sha256', adminToken).update(KEY_LABEL).digest(),
    );
  }

  encode(binding: CursorBinding, position: bigint): string {
    const body = Buffer.alloc(BODY_BYTES);
    body.writeUInt8(FORMAT, 0);
    body.writeBigUInt64BE(position, 1);
    return Buffer.concat([body, this.mac(body, binding)]).toString('base64url');
  }

  /** The position a cursor stands for, if it was issued for exactly this caller and listing; else CURSOR_MISMATCH. */
  decode(binding: CursorBinding, cursor: string): bigint {
    const bytes = Buffer.from(cursor, 'base64url');
    // Re-encoding must give the cursor back: base64url decoding skips stray characters and ignores the last one's spare bits.
    if (bytes.length !== BODY_BYTES + MAC_BYTES || bytes.toString('base64url') !== cursor || bytes[0] !== FORMAT)
      throw cursorMismatch(binding.chosenBy);
    const body = bytes.subarray(0, BODY_BYTES);
    if (!timingSafeEqual(bytes.subarray(BODY_BYTES), this.mac(body, binding))) throw cursorMismatch(binding.chosenBy);
    return body.readBigUInt64BE(1);
  }

  private mac(body: Buffer, binding: CursorBinding): Buffer {
    return createHmac('sha256', this.key)
      .update(body)
      .update(JSON.stringify([binding.caller, ...binding.listing]))
      .digest();
  }
}

export const cursorMismatch = (words: ListingWords = MESSAGE_LISTING): MailboxError =>
  new MailboxError(
    'CURSOR_MISMATCH',
    'Cursor mismatch',
    `This cursor was not issued for this listing (${words.other}, another caller, or altered); ` +
      `start again without a cursor and pass each nextCursor back unchanged with the same ${words.same}.`,
    { field: 'cursor' },
  );
