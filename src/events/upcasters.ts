/**
 * Old events stay readable: each stored event is upgraded to the current
 * schema version when read, never rewritten in the store. Add an upcaster per
 * (type, fromVersion) when a schema changes, and bump CURRENT_SCHEMA_VERSION.
 */
import type { MailboxEventType, StoredEvent } from './types';

export const CURRENT_SCHEMA_VERSION = 1;

type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/** Keyed `${type}@${fromVersion}`; each upgrades one version. */
const UPCASTERS: Partial<Record<`${MailboxEventType}@${number}`, Upcaster>> = {};

export function upcast(event: StoredEvent): StoredEvent {
  let version = event.metadata.schemaVersion ?? CURRENT_SCHEMA_VERSION;
  if (version >= CURRENT_SCHEMA_VERSION) return event;
  let data = event.data as unknown as Record<string, unknown>;
  while (version < CURRENT_SCHEMA_VERSION) {
    const upcaster = UPCASTERS[`${event.type}@${version}`];
    if (upcaster) data = upcaster(data);
    version++;
  }
  return { ...event, data: data as never, metadata: { ...event.metadata, schemaVersion: version } };
}
