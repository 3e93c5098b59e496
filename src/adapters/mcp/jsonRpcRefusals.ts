/**
 * JSON-RPC messages the MCP SDK's transports would answer wrongly or not at all, refused here with the error JSON-RPC
 * 2.0 names for each; its data is the mailbox's envelope, whose message says the valid form. No SDK import: POST /mcp
 * checks these before it loads the SDK.
 */
import { MailboxError } from '../../errors';

/** A JSON-RPC error answer (id null: the request's id could not be read) whose data is the envelope. */
export const jsonRpcError = (code: number, error: MailboxError, id: string | number | null = null) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message: error.message, data: error.envelope },
});

/**
 * `batches`: whether the transport takes a batch (stdio takes one message per line).
 * JSON-RPC 2.0 answers an empty array with one Invalid Request error; the SDK's transport read it as a batch of
 * nothing but notifications and answered an empty 202, as if something had been accepted.
 */
export function emptyBatch(body: unknown, batches = true): MailboxError | null {
  if (!Array.isArray(body) || body.length > 0) return null;
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    'Invalid Request: an empty batch ([]) holds no message, so nothing was done. Send one JSON-RPC request, e.g. ' +
      `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}${batches ? ', or an array of one or more.' : ', on a line of its own.'}`,
    { field: 'body' },
  );
}

type Json = Record<string, unknown>;

const EXAMPLE = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}';
const REQUEST_KEYS = ['jsonrpc', 'id', 'method', 'params'];

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const isId = (value: unknown): value is string | number => typeof value === 'string' || Number.isSafeInteger(value);

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** What is wrong with `message` (called `subject`), which the SDK does not take as JSON-RPC: [field, a sentence]. */
function whatIsWrong(message: unknown, subject: string): [string, string] {
  // An empty POST (no bytes, or only whitespace) was told it "is a undefined".
  if (message === undefined)
    return ['body', `the request has no body: send one JSON-RPC message, an object such as ${EXAMPLE}, as JSON`];
  if (!isObject(message))
    return ['body', `${subject} is ${kindOf(message)}, not a JSON-RPC message: an object such as ${EXAMPLE}`];
  if (message.jsonrpc !== '2.0') {
    const has = 'jsonrpc' in message ? `"jsonrpc": ${JSON.stringify(message.jsonrpc)}` : 'no "jsonrpc"';
    return ['jsonrpc', `${subject} has ${has}: it must be "2.0"`];
  }
  if (!('method' in message) && !('result' in message) && !('error' in message))
    return ['method', `${subject} has no "method": a request names its method, e.g. ${EXAMPLE}`];
  if ('method' in message) {
    if (typeof message.method !== 'string')
      return ['method', `the "method" of ${subject} must be a string naming the method, e.g. "tools/list"`];
    if ('id' in message && !isId(message.id))
      return [
        'id',
        `the "id" of ${subject} must be a string or an integer (got ${kindOf(message.id)}); only a notifications/* method goes without one`,
      ];
    if ('params' in message && !isObject(message.params))
      return [
        'params',
        `the "params" of ${subject} must be an object of named parameters (got ${kindOf(message.params)}), or left out`,
      ];
    const unknown = Object.keys(message).filter((key) => !REQUEST_KEYS.includes(key));
    if (unknown.length > 0)
      return [
        unknown[0],
        `${subject} holds ${unknown.map((key) => `"${key}"`).join(', ')}: a request holds only ${REQUEST_KEYS.join(', ')}`,
      ];
  }
  return [
    'body',
    `${subject} is not a JSON-RPC 2.0 message: a request is an object such as ${EXAMPLE}; a response holds jsonrpc, id and result or error`,
  ];
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const META_FORM = `{"progressToken": "<a string or an integer>", "${RELATED_TASK}": {"taskId": "<a task id>"}} (each optional)`;

/**
 * What is wrong with a request's `params._meta` (MCP's request metadata, which the SDK checks as part of the message):
 * [field, a sentence saying the valid form], or null. The SDK refused such a request as no JSON-RPC message at all,
 * naming nothing; it is a well-formed request whose params are wrong.
 */
function metaProblem(params: Json): [string, string] | null {
  if (!('_meta' in params)) return null;
  const meta = params._meta;
  if (!isObject(meta))
    return ['params._meta', `'params._meta' must be an object such as ${META_FORM}, or left out (got ${kindOf(meta)})`];
  if ('progressToken' in meta && !isId(meta.progressToken))
    return [
      'params._meta.progressToken',
      `'params._meta.progressToken' must be a string or an integer, or left out (got ${kindOf(meta.progressToken)}): _meta is ${META_FORM}`,
    ];
  const related = meta[RELATED_TASK];
  if (RELATED_TASK in meta && !(isObject(related) && typeof related.taskId === 'string'))
    return [
      `params._meta.${RELATED_TASK}`,
      `'params._meta.${RELATED_TASK}' must be an object {"taskId": "<a task id>"}, or left out: _meta is ${META_FORM}`,
    ];
  return null;
}

/**
 * A JSON value that is no JSON-RPC message (`isMessage`: the SDK's own test, so that what passes here the SDK takes):
 * JSON-RPC 2.0 calls it an Invalid Request (-32600). The SDK's transport answered -32700 "Parse error: Invalid JSON-RPC
 * message", the code of JSON that could not be parsed, naming nothing. A batch is refused whole, naming its first
 * such entry (nothing of it runs). The answer carries the message's id when it could be read.
 */
export function invalidJsonRpc(
  body: unknown,
  isMessage: (message: unknown) => boolean,
): { error: MailboxError; id: string | number | null; code: number } | null {
  const batch = Array.isArray(body);
  const messages: unknown[] = batch ? body : [body];
  const index = messages.findIndex((message) => !isMessage(message));
  if (index < 0) return null;
  const message = messages[index];
  const params = isObject(message) && isObject(message.params) ? metaProblem(message.params) : null;
  if (params && !batch && isObject(message) && typeof message.method === 'string' && isId(message.id)) {
    // A request whose only fault is its params: JSON-RPC's Invalid params (-32602), answered with its id.
    const [field, wrong] = params;
    const text = `Invalid params for ${message.method}: ${wrong}. Nothing was done.`;
    const error = new MailboxError('VALIDATION_FAILED', 'Validation failed', text, { field, method: message.method });
    return { error, id: message.id, code: -32602 };
  }
  const subject = batch ? `batch entry [${index}]` : 'the message';
  const [field, wrong] = params ? [params[0], `${subject}: ${params[1]}`] : whatIsWrong(message, subject);
  const text = `Invalid Request: ${wrong}. Nothing ${batch ? 'in the batch ' : ''}was done.`;
  const id = !batch && isObject(message) && isId(message.id) ? message.id : null;
  return {
    error: new MailboxError('VALIDATION_FAILED', 'Validation failed', text, { field, ...(batch ? { index } : {}) }),
    id,
    code: -32600,
  };
}
