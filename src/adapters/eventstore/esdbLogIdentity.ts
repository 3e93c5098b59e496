/**
 * The EventStoreDB log's identity: one event in a small stream, written once.
 * The stream name does not start with the mailbox prefix, so the projection
 * subscription (filtered on that prefix) and readAll never see it.
 */
import { randomUUID } from 'node:crypto';
import type { EsdbEventData, EsdbRecordedEvent } from './esdbClientCompat';

export const LOG_IDENTITY_STREAM = 'mailbox.log-identity';
export const LOG_IDENTITY_EVENT = 'LogIdentityAssigned';

export const logIdentityEvent = (identity: string): EsdbEventData[] => [
  {
    id: randomUUID(),
    contentType: 'application/json',
    type: LOG_IDENTITY_EVENT,
    data: { logIdentity: identity },
    metadata: undefined,
  },
];

export function logIdentityOf(event: EsdbRecordedEvent | undefined): string {
  const identity = (event?.data as { logIdentity?: unknown } | undefined)?.logIdentity;
  if (event?.type !== LOG_IDENTITY_EVENT || typeof identity !== 'string' || identity === '') {
    throw new Error(`${LOG_IDENTITY_STREAM} does not start with a ${LOG_IDENTITY_EVENT} event carrying the log identity`);
  }
  return identity;
}
