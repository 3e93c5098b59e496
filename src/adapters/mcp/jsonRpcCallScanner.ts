/**
 * Which JSON-RPC call a body is, read from its bytes as they stream past, without keeping them or building any value
 * but the few it looks for: the top-level `id` and `method`, and `params.name` (the tool of a tools/call). POST /mcp
 * shows it a body over the request limit (never parsed, never applied), so that a tool call too large to be read is
 * still answered as that call: an MCP client matches an answer to its request by id, and the SDK puts the id last,
 * after the arguments. Only the structure is followed (strings, escapes, nesting), so a key named `id` inside the
 * arguments is never taken for the call's.
 *
 * Why not a streaming JSON library: @streamparser/json, made for streams, gathers every string and number whole in
 * memory before it emits it (its docs, "Buffering"), and a body refused for its size is mostly one long string; this
 * skips string contents and keeps only tokens up to MAX_TOKEN_BYTES.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longest key or value kept: an id, a method or a tool name is short; anything longer is not one of them. */
const MAX_TOKEN_BYTES = 256;

export interface ScannedCall {
  /** The body is a JSON array: a batch, which is no single call. */
  batch: boolean;
  id?: string | number;
  method?: string;
  /** `params.name`: the tool a tools/call names. */
  tool?: string;
}

type Container = 0x7b | 0x5b; // { or [

export class JsonRpcCallScanner {
  private depth = 0;
  /** The containers at depths 1 and 2 (the message, and the value of one of its keys); deeper ones are only counted. */
  private readonly containers: Container[] = [];
  private inString = false;
  private escaped = false;
  private expectingKey = false;
  /** The key whose value comes next at depth 1 and 2. */
  private readonly keys: Array<string | undefined> = [];
  /** The raw bytes of a string or scalar being kept (a key, or a value looked for), undefined when none is. */
  private token: number[] | undefined;
  private tokenIsKey = false;
  /** The last structural byte was a colon: a key's value starts at the next one. */
  private valueNext = false;
  private readonly found = new Map<string, unknown>();
  private readonly repeated = new Set<string>();
  private started = false;
  private isBatch = false;

  write(chunk: Uint8Array): void {
    const next = new NextOf(chunk);
    for (let i = 0; i < chunk.length; i += 1) {
      const byte = chunk[i];
      if (this.inString) {
        if (this.token === undefined && !this.escaped) {
          // Nothing kept from this string: jump to its next quote or backslash (a long body is one string).
          i = next.from(i);
          if (i >= chunk.length) return;
          this.stringByte(chunk[i]);
          continue;
        }
        this.stringByte(byte);
        continue;
      }
      if (this.token !== undefined && !this.tokenIsKey) {
        if (isScalarByte(byte)) {
          this.keep(byte);
          continue;
        }
        this.endValue();
      }
      this.structural(byte);
    }
  }

  /** The call, as far as the bytes seen name it. */
  result(): ScannedCall {
    if (this.isBatch) return { batch: true };
    const id = this.unique('id');
    const method = this.unique('method');
    const tool = this.unique('params.name');
    return {
      batch: false,
      ...(typeof id === 'string' || Number.isSafeInteger(id) ? { id: id as string | number } : {}),
      ...(typeof method === 'string' ? { method } : {}),
      ...(typeof tool === 'string' ? { tool } : {}),
    };
  }

  private unique(path: string): unknown {
    return this.repeated.has(path) ? undefined : this.found.get(path);
  }

  private stringByte(byte: number): void {
    if (this.escaped) {
      this.escaped = false;
      this.keep(byte);
      return;
    }
    if (byte === BACKSLASH) {
      this.escaped = true;
      this.keep(byte);
      return;
    }
    if (byte === QUOTE) {
      this.inString = false;
      this.keep(byte);
      if (this.token !== undefined && this.tokenIsKey) this.endKey();
      else if (this.token !== undefined) this.endValue();
      return;
    }
    this.keep(byte);
  }

  private structural(byte: number): void {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) return;
    if (!this.started) {
      this.started = true;
      if (byte === 0x5b && this.depth === 0) this.isBatch = true;
    }
    const valueStarts = this.valueNext;
    this.valueNext = byte === 0x3a;
    switch (byte) {
      case 0x7b: // {
      case 0x5b: // [
        this.depth += 1;
        if (this.depth <= 2) this.containers[this.depth - 1] = byte;
        this.expectingKey = byte === 0x7b;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        if (this.depth <= 2) this.keys[this.depth - 1] = undefined;
        this.depth -= 1;
        this.expectingKey = false;
        return;
      case 0x2c: // ,
        this.expectingKey = this.depth >= 1 && this.depth <= 2 && this.containers[this.depth - 1] === 0x7b;
        if (this.depth <= 2) this.keys[this.depth - 1] = undefined;
        return;
      case 0x3a: // :
        return;
      case QUOTE:
        this.inString = true;
        if (this.expectingKey && this.depth <= 2) {
          this.expectingKey = false;
          this.startToken(true, byte);
        } else if (valueStarts && this.wanted() !== undefined) this.startToken(false, byte);
        return;
      default:
        if (valueStarts && this.wanted() !== undefined) this.startToken(false, byte);
    }
  }

  /** The path of the value that starts here, when it is one looked for. */
  private wanted(): string | undefined {
    if (this.depth === 1 && this.containers[0] === 0x7b) {
      const key = this.keys[0];
      return key === 'id' || key === 'method' ? key : undefined;
    }
    if (this.depth === 2 && this.containers[0] === 0x7b && this.keys[0] === 'params' && this.containers[1] === 0x7b)
      return this.keys[1] === 'name' ? 'params.name' : undefined;
    return undefined;
  }

  private startToken(isKey: boolean, byte: number): void {
    this.token = [byte];
    this.tokenIsKey = isKey;
  }

  private keep(byte: number): void {
    if (this.token === undefined) return;
    if (this.token.length >= MAX_TOKEN_BYTES) {
      // Too long to be what is looked for: a key is then none of them, a value is not kept.
      if (this.tokenIsKey) this.keys[this.depth - 1] = '';
      this.token = undefined;
      this.tokenIsKey = false;
      return;
    }
    this.token.push(byte);
  }

  private decoded(): unknown {
    const raw = Buffer.from(this.token ?? []).toString('utf8');
    this.token = undefined;
    this.tokenIsKey = false;
    try {
      return JSON.parse(raw);
    } catch {
      return undefined;
    }
  }

  private endKey(): void {
    const key = this.decoded();
    this.keys[this.depth - 1] = typeof key === 'string' ? key : '';
  }

  private endValue(): void {
    const path = this.wanted();
    const value = this.decoded();
    if (path === undefined) return;
    if (this.found.has(path)) this.repeated.add(path);
    this.found.set(path, value);
  }
}

const isScalarByte = (byte: number) =>
  (byte >= 0x30 && byte <= 0x39) ||
  byte === 0x2d ||
  byte === 0x2b ||
  byte === 0x2e ||
  (byte >= 0x61 && byte <= 0x7a) ||
  byte === 0x45;

/**
 * The next quote or backslash of a chunk from a position (its length when there is none), each searched for again only
 * once passed: a chunk of many short strings is read once, not once per string.
 */
class NextOf {
  private quote = -1;
  private backslash = -1;

  constructor(private readonly chunk: Uint8Array) {}

  from(index: number): number {
    if (this.quote < index) this.quote = this.found(QUOTE, index);
    if (this.backslash < index) this.backslash = this.found(BACKSLASH, index);
    return Math.min(this.quote, this.backslash);
  }

  private found(byte: number, index: number): number {
    const at = this.chunk.indexOf(byte, index);
    return at < 0 ? this.chunk.length : at;
  }
}
