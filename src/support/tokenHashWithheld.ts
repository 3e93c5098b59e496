/**
 * What auditors read in place of a stored token hash (AgentRegistered, AgentTokenRotated: `data.tokenHash`). A hash of
 * a high-entropy token is not the token, but it is a credential verifier, which no auditor needs: it never leaves the
 * server (GET /v1/audit/events, `mailbox audit replay`). The field stays, so the events keep their shape; nothing that
 * audits the log (verify, replay's counts, the views) reads it.
 */
export const TOKEN_HASH_WITHHELD = '<the token hash, not shown>';

const KEY = '"tokenHash":';

/** `data` with its token hash, if it has one, replaced by TOKEN_HASH_WITHHELD. */
export function withheldTokenHash<T>(data: T): T {
  if (data === null || typeof data !== 'object' || !('tokenHash' in data)) return data;
  return { ...data, tokenHash: TOKEN_HASH_WITHHELD };
}

/** The same, of `data` as JSON text (as a log stores it): the text itself when it holds no token hash. */
export function withheldTokenHashText(data: string): string {
  if (!data.includes(KEY)) return data;
  return JSON.stringify(withheldTokenHash(JSON.parse(data) as unknown));
}
