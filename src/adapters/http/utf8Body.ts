/**
 * A request body is UTF-8 (RFC 8259: JSON exchanged between systems is UTF-8), and one that is not is refused:
 * decoding it leniently replaced each invalid byte with U+FFFD, so a body written in Latin-1 ("café" as
 * 63 61 66 E9) was stored as "caf\uFFFD", a subject or body other than the one sent, without a word. The error
 * names the first invalid byte and its offset, and the charset the request declared when it is not UTF-8.
 */
import { MailboxError } from '../../errors';
import { strictUtf8Text } from '../../support/utf8';

const declaredCharset = (contentType: string | undefined): string | undefined =>
  /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1];

/** The body as text; VALIDATION_FAILED when its bytes are not UTF-8. */
export function decodeUtf8Body(bytes: Buffer, contentType?: string): string {
  return strictUtf8Text(bytes, (problem, offset) => {
    const charset = declaredCharset(contentType);
    const declared =
      charset !== undefined && !/^utf-?8$/i.test(charset)
        ? ` (the Content-Type says charset=${charset}; JSON is read as UTF-8 only)`
        : '';
    return new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `The request body is not valid UTF-8: ${problem}${declared}; ` +
        'send the JSON encoded as UTF-8 (nothing was stored: invalid bytes are never replaced).',
      { field: 'body', offset },
    );
  });
}
