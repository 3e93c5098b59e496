/**
 * A thread id (DESIGN sections 3 and 4): the label that groups a conversation in each inbox, matched exactly by the
 * `threadId` filter. A send that omits it starts a thread named by its message id, a reply inherits its parent's;
 * given, it names a thread: 1-200 characters of printable text (a message id, or a name such as `deploy-2030-05`),
 * as printableText.ts defines it. A thread id that has the form of a message id (a UUID) is a message id's thread,
 * and a message id names the same message in any case: it is lower-cased, as a message id is, so that
 * `threadId: <an id in upper case>` joins that message's thread and the filter finds it either way (lossless-
 * permissive: an equivalent form accepted, the canonical one stored). Any other thread name is kept and matched as
 * typed, case included. One schema for the send, the inbox and outbox filter and mark_read's filter, so
 * that a filter takes exactly what a send takes.
 */
import { canonicalThreadId } from '../events/threadIdCase';
import { PRINTABLE_REFUSED, printableShortForm, printableText } from './printableText';

export const MAX_THREAD_ID_CHARS = 200;

/** The form in short, for the schemas' descriptions. */
export const THREAD_ID_SHORT_FORM = printableShortForm(MAX_THREAD_ID_CHARS);

/** The form, for the messages. */
export const THREAD_ID_FORM =
  `1-${MAX_THREAD_ID_CHARS} characters of printable text, e.g. a message id or a name such as "deploy-2030-05" ` +
  `(${PRINTABLE_REFUSED})`;

export const threadIdSchema = printableText({
  noun: 'thread id',
  names: 'thread',
  max: MAX_THREAD_ID_CHARS,
  form: THREAD_ID_FORM,
}).overwrite(canonicalThreadId);
