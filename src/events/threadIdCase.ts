/**
 * A thread id of a message id's form (a UUID) is a message id's thread, and a message id names the same message in
 * any case: its canonical form is lower case (commands/threadIds.ts stores it so since then). Logs written before
 * hold such thread ids as they were typed (`0190ABCD-...`), which a `threadId` filter, lower-cased as a send's is,
 * never found: the read model and the reply's thread check take every thread id in this form. Any other thread name
 * is kept as it is, case included.
 */
import { z } from 'zod';

const MESSAGE_ID_FORM = z.uuid(); // what commands/messageIds.ts's messageIdSchema takes

export function canonicalThreadId(threadId: string): string {
  const lower = threadId.toLowerCase();
  if (lower === threadId) return threadId; // every thread id a send wrote since it is canonical: no parse
  return MESSAGE_ID_FORM.safeParse(threadId).success ? lower : threadId;
}
