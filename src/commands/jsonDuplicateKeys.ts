/**
 * A JSON object that names one key twice (`{"body": "a", "body": "b"}`) is refused, in every JSON input that
 * arrives as text (HTTP bodies, MCP requests over HTTP, JSON sent inside a string field). JSON.parse keeps
 * the last value and drops the others without a word, so the mailbox would act on an input other than the one
 * sent; RFC 8259 leaves such objects' meaning to each parser. The error names the key and where it is.
 * (`arguments` JSON-encoded as a string in an MCP tools/call are checked too, in mcpServer.ts; over MCP's stdio,
 * the SDK parses each line before the mailbox sees it, so a repeat there is settled by the SDK's parser.)
 *
 * A scan of the text, which JSON.parse has already accepted (so it is well-formed): keys are compared as
 * JSON.parse reads them (`"b\u006fdy"` is `body`). Linear in the text: ~0.5 µs for a 400-byte send, ~0.7 ms for a 900 KB body.
 */
import { MailboxError } from '../errors';
import { jsonField } from './jsonDepth';

type Frame = { object: true; keys: Set<string>; key: string | null } | { object: false; index: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The path (keys and indexes) to the first key named twice in its object, or null. `text` must be valid JSON. */
export function pathOfDuplicateKey(text: string): Array<string | number> | null {
  const stack: Frame[] = [];
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      i = endOfString(text, start);
      const top = stack[stack.length - 1];
      if (expectingKey && top?.object) {
        const raw = text.slice(start + 1, i);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(start, i + 1)) as string) : raw;
        if (top.keys.has(key)) return [...pathTo(stack), key];
        top.keys.add(key);
        top.key = key;
        expectingKey = false;
      }
      continue;
    }
    if (c === 0x7b /* { */) {
      stack.push({ object: true, keys: new Set(), key: null });
      expectingKey = true;
    } else if (c === 0x5b /* [ */) {
      stack.push({ object: false, index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.object) expectingKey = true;
      else if (top) top.index++;
    }
  }
  return null;
}

/**
 * The index of the quote that closes the string opening at `start`. indexOf finds each quote (a message body of
 * 1 MB is one string: scanned at memchr speed, not a character at a time); a quote after an odd run of
 * backslashes is escaped and skipped. The run cannot reach past the opening quote.
 */
function endOfString(text: string, start: number): number {
  for (let from = start + 1; ;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length; // not reached: the text is valid JSON
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** Where the innermost object sits: each enclosing container's current key or index. */
function pathTo(stack: readonly Frame[]): Array<string | number> {
  return stack.slice(0, -1).map((frame) => (frame.object ? (frame.key ?? '') : frame.index));
}

/** Throws VALIDATION_FAILED when an object in `text` (valid JSON) names a key twice; `prefix`: where `text` sits. */
export function assertNoDuplicateKeys(text: string, prefix: Array<string | number> = []): void {
  const path = pathOfDuplicateKey(text);
  if (path !== null) throw duplicateKeyError(path, prefix);
}

/** The VALIDATION_FAILED error for the key at `path` (after `prefix`) named twice. */
export function duplicateKeyError(path: Array<string | number>, prefix: Array<string | number> = []): MailboxError {
  const field = jsonField(path, prefix);
  const key = String(path[path.length - 1]);
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    `'${field}' appears twice in one JSON object; send the key '${key}' once (a JSON parser keeps only the last value, ` +
      'so the mailbox refuses to guess which one you meant).',
    { field },
  );
}
