/**
 * Old events stay readable: each stored event is upgraded to the current
 * schema version when read (readEvent.ts), never rewritten in the store. Add a
 * stored shape (storedShapes.ts) and an upcaster per (type, fromVersion) when
 * a schema changes, and bump CURRENT_SCHEMA_VERSION.
 */
import { CURRENT_SCHEMA_VERSION, type StoredEventType } from './storedShapes';

export { CURRENT_SCHEMA_VERSION };

type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/** Keyed `${type}@${fromVersion}`; each upgrades one version. None yet: version 0 -> 1 changed no shape. */
const UPCASTERS: Partial<Record<`${StoredEventType}@${number}`, Upcaster>> = {};

/** The data of a `type` event written at `version`, at the current version. Only readEvent calls this. */
export function upcastData(type: StoredEventType, version: number, data: Record<string, unknown>): Record<string, unknown> {
  let upcast = data;
  for (let from = version; from < CURRENT_SCHEMA_VERSION; from++) {
    const upcaster = UPCASTERS[`${type}@${from}`];
    if (upcaster) upcast = upcaster(upcast);
  }
  return upcast;
}
