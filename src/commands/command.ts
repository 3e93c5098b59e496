/** Commands are imperatives that carry their context: ids, time and actor arrive in metadata. */
import type { Actor } from './roles';

export interface CommandMetadata {
  commandId: string;
  correlationId: string;
  causationId: string;
  actor: Actor;
  at: string; // ISO-8601 from the edge's clock; deciders never read the clock
}

export interface Command<Type extends string, Data> {
  type: Type;
  data: Data;
  metadata: CommandMetadata;
}

/** A hint on an accepted command (never a refusal): its code, a sentence a caller can act on, and details. */
export interface CommandWarning {
  code: string;
  message: string;
  [detail: string]: unknown;
}
