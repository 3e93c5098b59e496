/**
 * What a reused Idempotency-Key's request changed. IDEMPOTENCY_KEY_REUSED said only "already used for a different
 * message": a client that believed it was retrying (the same message, `to` sent as "@bob" the first time and ["@bob"]
 * the second, say) could not tell what it had changed. The fields named are those the first request's MessageSent
 * shows differently; anything the log keeps elsewhere (expectsReplyBy) is not compared, so an empty answer means
 * "nothing the message shows", never "nothing".
 */
import type { MessageSent } from '../events/types';
import { parseRecipient } from './recipients';
import type { SendMessageInput } from './schemas';

type Sent = MessageSent['data'];

/** Equal as JSON values, whatever the order of an object's keys (the request fingerprint ignores it too). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const aKeys = Object.keys(a).filter((key) => (a as Record<string, unknown>)[key] !== undefined);
  const bKeys = Object.keys(b).filter((key) => (b as Record<string, unknown>)[key] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** `to` as the log would keep this request's (sendMessage.ts storedAddressee); null: not a recipient the log could keep. */
function storedTo(to: unknown): string | string[] | null {
  const recipient = parseRecipient(to);
  if (!('kind' in recipient)) return null;
  if (recipient.kind === 'broadcast') return 'AGENT:*';
  return recipient.kind === 'direct' ? recipient.identity : recipient.identities;
}

/** The fields, in the order a message lists them, in which `input` differs from the message its key first sent. */
export function fieldsChangedSince(sent: Sent, input: SendMessageInput): string[] {
  // A first send without threadId nor inReplyTo started its own thread, named by its id.
  const threadNamed = sent.inReplyTo === null && sent.threadId !== sent.messageId ? sent.threadId : undefined;
  const compared: Array<[field: string, same: boolean]> = [
    ['to', sameJson(storedTo(input.to), sent.to)],
    ['subject', input.subject === sent.subject],
    ['body', input.body === sent.body],
    ['priority', input.priority === sent.priority],
    ['inReplyTo', (input.inReplyTo ?? null) === sent.inReplyTo],
    ['threadId', input.inReplyTo !== undefined || input.threadId === threadNamed],
    ['tags', sameJson(input.tags, sent.tags)],
    ['wakeSuppressed', input.wakeSuppressed === sent.wakeSuppressed],
    ['task', sameJson(input.task ?? null, sent.task)],
  ];
  return compared.filter(([, same]) => !same).map(([field]) => field);
}
