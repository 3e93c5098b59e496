/**
 * The configured limits as the schemas a server serves state them (POST /mcp's tools/list, GET /openapi.json and
 * /docs): a model reads them to get its first call right, so they are this server's own, not the defaults. Only the
 * message body's limit is configured (MAILBOX_MAX_BODY_BYTES); the other limits (subject, tags, recipients, page
 * sizes) are the same on every server and stated by the schemas themselves. GET /v1/whoami answers them, so that
 * `mailbox mcp` states its server's too. Without limits (the checked-in openapi.json), the defaults, said to be the
 * defaults; LIMITS_UNREAD (`mailbox mcp` whose server could not be asked), the defaults, said to be, and why.
 */
import { DEFAULT_MAX_BODY_BYTES, type MailboxConfig } from '../config';

export type ServedLimits = Pick<MailboxConfig, 'maxBodyBytes'>;

/** A server's limits as it serves them (GET /v1/whoami's `limits`, the schemas of POST /mcp and GET /openapi.json). */
export const servedLimitsOf = (config: MailboxConfig): ServedLimits => ({ maxBodyBytes: config.maxBodyBytes });

/** Asked for and not told: `mailbox mcp`, whose server was unreachable or refused its token at start. */
export const LIMITS_UNREAD = { unread: true } as const;

/** What a schema states: a server's limits, or LIMITS_UNREAD; none: the defaults' document. */
export type StatedLimits = ServedLimits | typeof LIMITS_UNREAD;

/** 65536: "64 KiB"; 100: "100 bytes" (the refusal names the bytes, as JSON's maxLength cannot: it counts characters). */
export const bytesText = (bytes: number): string => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);

/** The body limit in words: this server's, or the default's (and, when the server's could not be read, that). */
export const bodyLimitText = (limits?: StatedLimits): string => {
  if (limits && 'maxBodyBytes' in limits) return bytesText(limits.maxBodyBytes);
  const byDefault = `${bytesText(DEFAULT_MAX_BODY_BYTES)} by default`;
  return limits ? `${byDefault} (the server's own limit could not be read)` : byDefault;
};

/** The descriptions of a send's properties that state a configured limit (add_message, POST /v1/messages). */
export const sendLimitDescriptions = (limits?: StatedLimits): Record<string, string> => ({
  body: `markdown; at most ${bodyLimitText(limits)}`,
});
