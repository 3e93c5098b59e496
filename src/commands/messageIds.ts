/**
 * A message id is a UUID (as a send returns it); upper and lower case name the same message, so ids are lower-cased
 * at the edge, before anything compares them. A thread id of this form is held to the same case (events/threadIdCase.ts).
 */
import { z } from 'zod';
import { receivedOf } from './teachingMessages';

/**
 * What was given instead of an id, for the message: a subject or a name quoted (shortened), else its kind. "Must be a
 * message id: a UUID, as returned by a send" alone left a model that passed a subject, or a received message's
 * title, to guess where the ids are; the message now shows what it sent and where ids are listed.
 */
function given(input: unknown): string {
  if (typeof input === 'string')
    return `'${input.length > 40 ? `${input.slice(0, 40)}...` : input}' is not one${idWithin(input)}`;
  if (input === undefined) return 'none was given';
  if (input === null) return 'got null';
  return `got ${receivedOf(input)}`;
}

const UUID_WITHIN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ID_FORM = z.uuid();

/**
 * The id a text holds with something around it, suggested (never taken): an id copied with a space or a line break at
 * its end, in quotes or angle brackets, after "id: ". Told only that the text "is not one", a model compared the id
 * with the one it had printed and saw no difference. Nothing when the text holds no id, or more than one.
 */
function idWithin(text: string): string {
  const found = text.match(UUID_WITHIN) ?? [];
  if (found.length !== 1 || !ID_FORM.safeParse(found[0]).success) return '';
  const around = text.trim() === found[0] ? 'the whitespace around it' : 'what surrounds it';
  return `: did you mean '${found[0]}'? (the id alone, without ${around})`;
}

const NOT_AN_ID =
  'must be a message id: a UUID such as 5b2a33c9-6374-5961-8e7b-b5d7c7ddbb86, as a send returns it and a listing ' +
  "shows it (list_messages' messageId, list_tasks' taskId)";

/** `onArray`: what an array given for one id is told, before the array itself is shown. */
export const messageId = (onArray = 'must be one message id, a UUID string, as returned by a send') =>
  z
    .uuid({
      error: (issue) =>
        Array.isArray(issue.input) ? `${onArray}; got ${receivedOf(issue.input)}` : `${NOT_AN_ID}; ${given(issue.input)}`,
    })
    .toLowerCase();
export const messageIdSchema = messageId();
