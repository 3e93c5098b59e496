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
 * JSON-RPC 2.0 answers an empty array with one Invalid Request error; the SDK's transport read it as a batch of
 * nothing but notifications and answered an empty 202, as if something had been accepted.
 */
export function emptyBatch(body: unknown): MailboxError | null {
  if (!Array.isArray(body) || body.length > 0) return null;
  return new MailboxError(
    'VALIDATION_FAILED',
    'Validation failed',
    'Invalid Request: an empty batch ([]) holds no message, so nothing was done. Send one JSON-RPC request, e.g. ' +
      '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, or an array of one or more.',
    { field: 'body' },
  );
}
