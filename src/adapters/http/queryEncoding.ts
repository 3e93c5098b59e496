/**
 * A query string is UTF-8, percent-encoded (RFC 3986, WHATWG URL). fastify's parser (fast-querystring) keeps a
 * parameter it cannot decode as it was written: `tags=caf%E9` ("café" in Latin-1) filtered on the tag 'caf%E9',
 * `tags=100%` on '100%' (which `tags=100%25` also means), and the answer was an empty page with 200, as if
 * nothing matched. Such a query is refused instead, naming the parameter and the escape, before any route runs.
 */
import { MailboxError } from '../../errors';
import { firstInvalidUtf8Offset, invalidByteAt } from '../../support/utf8';

const ESCAPE = /^%[0-9A-Fa-f]{2}$/;

/** Why one name or value of the query cannot be decoded, or null when it can. */
function undecodable(raw: string): string | null {
  if (!raw.includes('%')) return null;
  const bytes: number[] = [];
  for (let at = 0; at < raw.length; at += 1) {
    if (raw[at] !== '%') {
      bytes.push(raw.charCodeAt(at)); // node's HTTP parser refuses a request-target that is not ASCII
      continue;
    }
    const escape = raw.slice(at, at + 3);
    if (!ESCAPE.test(escape)) {
      return `'${escape}' at character ${at} is not a percent escape (% and two hexadecimal digits); write a literal % as %25`;
    }
    bytes.push(Number.parseInt(escape.slice(1), 16));
    at += 2;
  }
  const decoded = Buffer.from(bytes);
  const offset = firstInvalidUtf8Offset(decoded);
  if (offset === -1) return null;
  return (
    `${invalidByteAt(decoded, offset)} of what it decodes to is not part of a UTF-8 character; ` +
    'percent-encode the UTF-8 bytes of the text (é is %C3%A9, not %E9)'
  );
}

const plainName = (raw: string) => decodeURIComponent(raw.replace(/\+/g, ' '));

/** VALIDATION_FAILED naming the first parameter of `query` (the part after `?`) that is not percent-encoded UTF-8. */
export function assertQueryDecodable(query: string): void {
  for (const pair of query.split('&')) {
    const equals = pair.indexOf('=');
    const name = equals === -1 ? pair : pair.slice(0, equals);
    const nameProblem = undecodable(name);
    const valueProblem = nameProblem === null && equals !== -1 ? undecodable(pair.slice(equals + 1)) : null;
    if (nameProblem === null && valueProblem === null) continue;
    const field = nameProblem === null ? plainName(name) : name;
    const what = nameProblem === null ? `The value of the query parameter '${field}'` : `The query parameter name '${name}'`;
    throw new MailboxError(
      'VALIDATION_FAILED',
      'Validation failed',
      `${what} is not percent-encoded UTF-8: ${nameProblem ?? valueProblem}. Nothing was done.`,
      { field },
    );
  }
}

/** The query string of a request-target (`/v1/messages?tags=x` -> `tags=x`), '' when it has none. */
export const queryOf = (url: string): string => {
  const mark = url.indexOf('?');
  return mark === -1 ? '' : url.slice(mark + 1);
};
