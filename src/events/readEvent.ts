/**
 * The one way an event leaves a store: every adapter's reads (readStream,
 * readAll, subscribe) pass each stored event through readEvent, which checks
 * it against its version's stored shape, upcasts it to the current version and
 * checks the result. A stored event that does not fit is a loud error naming
 * where it is and which field is wrong, never a cast.
 */
import type { z } from 'zod';
import { SKIP_EVENT_CHECKS_VARIABLE } from './eventChecksSwitch';
import { compileShapeCheck, type ShapeCheck } from './shapeCheck';
import { CURRENT_SCHEMA_VERSION, eventMetadataV1, STORED_SHAPES, type StoredEventType } from './storedShapes';
import type { NewEvent, StoredEvent } from './types';
import { upcastData } from './upcasters';

/** An event as a store holds it, before it is known to be one of ours. */
export interface RawStoredEvent {
  eventId: string;
  streamName: string;
  revision: bigint;
  position: bigint;
  type: string;
  data: unknown;
  metadata: unknown;
}

export class InvalidStoredEvent extends Error {
  constructor(
    readonly streamName: string,
    readonly position: bigint,
    readonly type: string,
    readonly field: string,
    detail: string,
  ) {
    super(
      position < 0n
        ? `New event ${type} for stream ${streamName} does not match its stored shape: ${field}: ${detail}. Nothing was written.`
        : `Stored event ${type} at position ${position} of stream ${streamName} does not match its stored shape: ` +
            `${field}: ${detail}. The log holds an event this build cannot read; restore it from a backup or add an upcaster.`,
    );
    this.name = 'InvalidStoredEvent';
  }
}

interface Shape {
  schema: z.ZodType;
  check: ShapeCheck;
}

const shapeOf = (schema: z.ZodType): Shape => ({ schema, check: compileShapeCheck(schema) });
const METADATA = shapeOf(eventMetadataV1);
const DATA_SHAPES = new Map(
  [...STORED_SHAPES].map(([version, shapes]) => [
    version,
    new Map(Object.entries(shapes).map(([type, schema]) => [type, shapeOf(schema)])),
  ]),
);
const READABLE_VERSIONS = [...STORED_SHAPES.keys()].join(', ');

const SKIP_CHECKS = process.env[SKIP_EVENT_CHECKS_VARIABLE] === '1';

export function readEvent(raw: RawStoredEvent): StoredEvent {
  if (!SKIP_CHECKS) expectShape(raw, 'metadata', METADATA, raw.metadata);
  const version = (raw.metadata as { schemaVersion: number }).schemaVersion;
  const shapes = DATA_SHAPES.get(version);
  if (!shapes)
    fail(raw, 'metadata.schemaVersion', `version ${version} is unknown; this build reads versions ${READABLE_VERSIONS}`);
  const shape = shapes.get(raw.type);
  if (!shape) fail(raw, 'type', `'${raw.type}' is not a mailbox event type (${[...shapes.keys()].join(', ')})`);
  if (!SKIP_CHECKS) expectShape(raw, 'data', shape, raw.data);
  if (version === CURRENT_SCHEMA_VERSION) return raw as StoredEvent;
  const data = upcastData(raw.type as StoredEventType, version, raw.data as Record<string, unknown>);
  expectShape(raw, 'data', DATA_SHAPES.get(CURRENT_SCHEMA_VERSION)!.get(raw.type)!, data);
  return { ...raw, data, metadata: { ...(raw.metadata as object), schemaVersion: CURRENT_SCHEMA_VERSION } } as StoredEvent;
}

/**
 * The same check before an append (CommandHandler): an event that would not read back is refused before it is
 * written, so a loosened input schema or a decider bug fails the command instead of poisoning the log.
 */
export function checkNewEvent(event: NewEvent, streamName: string): void {
  const raw: RawStoredEvent = { ...event, streamName, revision: -1n, position: -1n };
  expectShape(raw, 'metadata', METADATA, event.metadata);
  const shape = DATA_SHAPES.get(CURRENT_SCHEMA_VERSION)!.get(event.type);
  if (!shape) fail(raw, 'type', `'${event.type}' is not a mailbox event type`);
  expectShape(raw, 'data', shape, event.data);
}

function expectShape(raw: RawStoredEvent, part: 'data' | 'metadata', shape: Shape, value: unknown): void {
  if (shape.check(value)) return;
  const parsed = shape.schema.safeParse(value);
  if (parsed.success) return; // the fast check is conservative; zod has the last word
  const issue = parsed.error.issues[0];
  fail(raw, [part, ...issue.path.map(String)].join('.'), issue.message);
}

function fail(raw: RawStoredEvent, field: string, detail: string): never {
  throw new InvalidStoredEvent(raw.streamName, raw.position, raw.type, field, detail);
}
