/**
 * Webhook signing: HMAC-SHA256 over `<timestamp>.<body>` with the shared
 * secret. The timestamp is signed too, so a captured request cannot be
 * replayed later than the receiver's tolerance.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-mailbox-signature';
export const TIMESTAMP_HEADER = 'x-mailbox-timestamp';
export const NUDGE_ID_HEADER = 'x-mailbox-nudge-id';

export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** For receivers: true when the signature matches and the timestamp is within `toleranceSeconds` of now. */
export function verifyWebhookSignature(
  secret: string,
  signature: string,
  timestampSeconds: number,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300,
): boolean {
  if (!Number.isFinite(timestampSeconds) || Math.abs(nowSeconds - timestampSeconds) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, timestampSeconds, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
