/**
 * The field a caller most likely meant when it sent one that is not (DESIGN section 2, layer 3: suggest, never
 * substitute): names models guess for the mailbox's fields (`state` for update_task's `to`, `id` for `messageId`,
 * `recipients` or `cc` for `to`, `content` for `body`, `pageSize` for `limit`...), the same name in another case or
 * separator (`message_id`), and near spellings (`subjet`). Only a field the schema takes there is ever suggested; the
 * input is refused all the same (UNKNOWN_FIELD, nothing done).
 */
import { editDistance } from './suggestions';

/** `message_id`, `messageID` and `message-id` are the same word to whoever typed it. */
const squash = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * [the field, names guessed for it, the inputs it is suggested in (all when absent)]. In order: the first entry whose
 * field is taken where the unknown one was sent wins (`status` is update_task's `to`, list_tasks' `state`).
 */
const RECIPIENT_GUESSES = ['recipient', 'recipients', 'cc', 'bcc', 'target', 'receiver', 'destination', 'agent', 'agents'];

type Guesses = [field: string, guesses: readonly string[], inputs?: readonly string[]];

const COMMON: readonly Guesses[] = [
  ['to', ['state', 'status', 'new_state', 'target_state', 'next_state', 'transition'], ['update_task']],
  ['to', RECIPIENT_GUESSES, ['add_message', 'list_messages']],
  // A task's id is the messageId of the message that carried it: a model holding one passes it under the other name.
  ['messageId', ['id', 'msg_id', 'message', 'msg', 'uuid', 'taskId']],
  ['messageIds', ['ids', 'msg_ids', 'messages']],
  ['taskId', ['id', 'task', 'task_uuid', 'messageId']],
  ['subject', ['title', 'topic', 'summary', 'heading', 'subj']],
  ['body', ['content', 'text', 'message', 'msg', 'markdown', 'contents']],
  ['note', ['message', 'comment', 'input', 'answer', 'question', 'text', 'parts']],
  ['reason', ['why', 'error', 'explanation', 'cause', 'message']],
  ['artifacts', ['artifact', 'result', 'results', 'output', 'outputs', 'deliverable', 'deliverables', 'parts']],
  // A task's input is {parts: [...]}: a model sending its parts straight in the envelope meant 'input'.
  ['input', ['parts']],
  ['inReplyTo', ['reply_to', 'reply_to_id', 'parent', 'parent_id', 'parent_message_id', 'reply_to_message_id']],
  ['threadId', ['thread', 'conversation', 'conversation_id', 'context_id']],
  ['tags', ['tag', 'label', 'labels']],
  ['priority', ['importance', 'urgency', 'prio']],
  ['wakeSuppressed', ['silent', 'quiet', 'no_wake', 'suppress_wake']],
  ['expectsReplyBy', ['reply_by', 'due_by', 'reply_deadline']],
  ['idempotencyKey', ['idempotency', 'idem_key', 'request_id', 'dedupe_key', 'dedup_key']],
  ['status', ['state', 'unread', 'read', 'archived', 'filter']],
  ['state', ['status', 'states', 'task_state']],
  ['box', ['folder', 'mailbox', 'outbox', 'sent', 'view']],
  ['view', ['box', 'filter', 'role']],
  ['from', ['sender', 'author', 'from_agent']],
  ['limit', ['max', 'count', 'size', 'page_size', 'per_page', 'max_results', 'top', 'n']],
  ['cursor', ['next', 'next_cursor', 'page', 'page_token', 'after', 'offset']],
  ['after', ['cursor', 'next_after', 'next']],
  // The log's position: `mailbox audit replay --from N` reads from N, so an auditor asks the route with ?from=N.
  ['after', ['from', 'since', 'start', 'position', 'from_position'], ['GET /v1/audit/events']],
  ['before', ['until', 'older_than', 'sent_before']],
  ['leaseSeconds', ['lease', 'ttl', 'lease_duration', 'duration', 'timeout', 'seconds']],
  ['all', ['mark_all', 'everything']],
  // register_agent: an admin's first POST /v1/agents names the new agent as most APIs do.
  ['identity', ['name', 'agent', 'handle', 'username', 'agent_id', 'agent_name', 'id']],
  ['includeUnseen', ['unseen', 'include_unread']],
];

const MAX_SUGGESTIONS = 2;

/**
 * The fields of `allowed` that `key` most likely meant, the likeliest first; none when nothing is near. `input` names
 * the input refused (the tool, e.g. update_task); `given` the fields the caller did send (a field it sent already is
 * not what it meant by another).
 */
export function fieldsMeant(key: string, allowed: readonly string[], input: string, given: readonly string[] = []): string[] {
  const found: string[] = [];
  const add = (field: string | undefined) => {
    if (field !== undefined && allowed.includes(field) && !given.includes(field) && !found.includes(field)) found.push(field);
  };
  const typed = squash(key);
  add(allowed.find((field) => squash(field) === typed)); // message_id, MessageId
  for (const [field, guesses, inputs] of COMMON) {
    if ((inputs === undefined || inputs.includes(input)) && guesses.some((guess) => squash(guess) === typed)) add(field);
  }
  const budget = Math.floor(typed.length / 5); // one edit in five letters: subjet, thredId; none for a short name
  if (budget > 0)
    allowed
      .map((field) => ({ field, distance: editDistance(typed, squash(field)) }))
      .filter(({ distance }) => distance <= budget)
      .sort((a, b) => a.distance - b.distance)
      .forEach(({ field }) => add(field));
  return found.slice(0, MAX_SUGGESTIONS);
}

/**
 * For a send that gave `to` and another recipient field as well (`cc`, `recipients`): where those recipients go, since
 * `to` (given already) is not suggested. Empty otherwise.
 */
export function moreRecipientsHint(input: string, keys: readonly string[], given: readonly string[]): string {
  if (input !== 'add_message' || !given.includes('to')) return '';
  if (!keys.some((key) => RECIPIENT_GUESSES.includes(key.toLowerCase()))) return '';
  return ' Every recipient goes in \'to\': one @identity, AGENT:*, or a list such as ["@b", "@c"].';
}

/**
 * For a send given A2A's `parts` at the top level (a model writing an A2A message): a message has no parts, its text is
 * `body`; parts are a task's input (`task.input.parts`). Nothing near 'parts' is a field of a send, so it was named
 * alone. Empty otherwise.
 */
export function partsHint(input: string, keys: readonly string[]): string {
  if (input !== 'add_message' || !keys.includes('parts')) return '';
  return (
    " A message has no parts: its text goes in 'body' (Markdown); parts are a task's input, " +
    'task: {"input": {"parts": [{"kind": "text", "text": "..."}]}}.'
  );
}

/**
 * For the log's listing given `from` (or `since`...): `after` is exclusive where `mailbox audit replay --from N` reads
 * from N itself, so the suggestion alone would skip event N. Empty otherwise.
 */
export function positionHint(input: string, keys: readonly string[], allowed: readonly string[]): string {
  if (input !== 'GET /v1/audit/events' || !allowed.includes('after')) return '';
  if (!keys.some((key) => fieldsMeant(key, allowed, input).includes('after'))) return '';
  return ' after=N lists the events after position N (from N+1): to read from position N, as mailbox audit replay --from N does, pass after=N-1.';
}

/**
 * What a wrapper holds: an object, or that object JSON-encoded as one string (`{"filters": "{\"status\":\"unread\"}"}`,
 * seed 003's filter as a client encodes it); null for anything else.
 */
function wrappedObject(value: unknown): object | null {
  let inner = value;
  if (typeof inner === 'string') {
    try {
      inner = JSON.parse(inner);
    } catch {
      return null;
    }
  }
  return inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? inner : null;
}

/**
 * The whole input wrapped in one key (`{"arguments": {"to": ..., "subject": ..., "body": ...}}`, `input`, `params`,
 * `message`, or those fields JSON-encoded in it): a client or a model that nests a call's fields one level too deep. The
 * key it wrapped them in, when the input holds nothing else and every field inside is one this input takes; else null.
 */
export function wrapperOf(keys: readonly string[], given: unknown, allowed: readonly string[]): string | null {
  if (keys.length !== 1 || given === null || typeof given !== 'object' || Array.isArray(given)) return null;
  if (Object.keys(given).length !== 1) return null;
  const inner = wrappedObject((given as Record<string, unknown>)[keys[0]]);
  if (inner === null) return null;
  const fields = Object.keys(inner);
  return fields.length > 0 && fields.every((field) => allowed.includes(field)) ? keys[0] : null;
}

/** What to send instead of the wrapped input (wrapperOf): its fields themselves, at the top level. */
export const unwrapHint = (input: string, wrapper: string, given: Record<string, unknown>): string => {
  const fields = Object.keys(wrappedObject(given[wrapper]) ?? {});
  const form = `{${fields.map((field) => `"${field}": ...`).join(', ')}}`;
  return (
    ` The fields inside '${wrapper}' (${fields.join(', ')}) are ${input}'s own: give them at the top level, ${form}, ` +
    `not wrapped in '${wrapper}'. Nothing was done.`
  );
};
