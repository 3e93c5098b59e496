/**
 * What a reused Idempotency-Key's request changed. IDEMPOTENCY_KEY_REUSED said only "already used for a different
 * message": a client that believed it was retrying (the same message, `to` sent as "@bob" the first time and ["@bob"]
 * the second, say) could not tell what it had changed. The fields named are those the first request's MessageSent (and
 * its ReplyRequested: expectsReplyBy) shows differently. A field the log keeps only in its canonical form (a list's
 * repeated entry, a duration's spelling) cannot be compared; when nothing else differs, those the retry gave are named,
 * since one of them was written otherwise (found: a retry whose only change was expectsReplyBy was told no field).
 */
import type { MessageSent } from '../events/types';
import { parseRecipient } from './recipients';
import { replyDueBy } from './replyDeadline';
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

/** Whether the retry's expectsReplyBy, read from the first send's time (a duration counts from it), is the first's due time. */
function sameDueBy(sent: Sent, dueBy: string | null, input: SendMessageInput): boolean {
  if (input.expectsReplyBy === undefined || dueBy === null) return input.expectsReplyBy === undefined && dueBy === null;
  return replyDueBy(input.expectsReplyBy, sent.sentAt) === dueBy;
}

/**
 * The fields, in the order a message lists them, in which `input` differs from the message its key first sent (`dueBy`:
 * that send's ReplyRequested's, or null).
 */
export function fieldsChangedSince(sent: Sent, dueBy: string | null, input: SendMessageInput): string[] {
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
    ['expectsReplyBy', sameDueBy(sent, dueBy, input)],
    ['task', sameJson(input.task ?? null, sent.task)],
  ];
  const changed = compared.filter(([, same]) => !same).map(([field]) => field);
  if (changed.length > 0) return changed;
  // Equal as the log keeps them, yet another request: a list with (or without) a repeat, a duration spelled otherwise.
  const recipient = parseRecipient(input.to);
  const repeats = 'kind' in recipient && recipient.kind === 'list' && recipient.repeated.length > 0;
  const rewritten: Array<[field: string, given: boolean]> = [
    ['to', repeats],
    ['expectsReplyBy', input.expectsReplyBy !== undefined],
  ];
  if (!rewritten.some(([, given]) => given)) rewritten[0][1] = Array.isArray(input.to); // the first's list had the repeat
  return rewritten.filter(([, given]) => given).map(([field]) => field);
}
