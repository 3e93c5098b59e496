import { v5 as uuidv5 } from 'uuid';

/** Fixed namespace: ids derived from it must never change between releases. */
const NAMESPACE = '5b7d2a3e-8f0c-4c1e-9a55-2f6c0d8e4b71';

/**
 * Event ids are derived from the command id and the event's index, so a
 * retried append of the same decision carries the same ids and the store
 * de-duplicates it.
 */
export const deterministicEventId = (commandId: string, index: number): string => uuidv5(`${commandId}#${index}`, NAMESPACE);

/** Message ids: from the sender's Idempotency-Key when given, else from the command id. */
export const deterministicMessageId = (sender: string, idempotencyKey: string | null, commandId: string): string =>
  uuidv5(idempotencyKey === null ? `command:${commandId}` : `idem:${sender}:${idempotencyKey}`, NAMESPACE);
