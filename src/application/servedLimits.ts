/**
 * The configured limits as the schemas a server serves state them (POST /mcp's tools/list, GET /openapi.json and
 * /docs): a model reads them to get its first call right, so they are this server's own, not the defaults. Only the
 * message body's limit is configured (MAILBOX_MAX_BODY_BYTES); the other limits (subject, tags, recipients, page
 * sizes) are the same on every server and stated by the schemas themselves. Without limits (the checked-in
 * openapi.json, `mailbox mcp`, which does not know its server's), the defaults, said to be the defaults.
 */
import { DEFAULT_MAX_BODY_BYTES, type MailboxConfig } from '../config';

export type ServedLimits = Pick<MailboxConfig, 'maxBodyBytes'>;

/** 65536: "64 KiB"; 100: "100 bytes" (the refusal names the bytes, as JSON's maxLength cannot: it counts characters). */
export const bytesText = (bytes: number): string => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);

/** The body limit in words: this server's, or the default's. */
export const bodyLimitText = (limits?: ServedLimits): string =>
  limits ? bytesText(limits.maxBodyBytes) : `${bytesText(DEFAULT_MAX_BODY_BYTES)} by default`;

/** The descriptions of a send's properties that state a configured limit (add_message, POST /v1/messages). */
export const sendLimitDescriptions = (limits?: ServedLimits): Record<string, string> => ({
  body: `markdown; at most ${bodyLimitText(limits)}`,
});
