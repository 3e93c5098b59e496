/**
 * The blue/green port: a projection store that can build a new generation of
 * its views beside the active one and switch to it atomically. Requests keep
 * reading the active generation until the switch.
 */
import type { ProjectedEvent } from './viewChanges';

export interface ProjectionGeneration {
  readonly name: string;
  /**
   * Applies with the checkpoint, like the live store, but publishes no wakes
   * (history is not news). Calls may overlap (the rebuild keeps two batches in
   * flight); they take effect in call order. `follows`: the position the batch
   * comes after in the log (null: the log's start); unless the generation holds
   * everything up to it, nothing is applied and the call rejects with
   * GenerationGap, so a batch that failed (perhaps never sent) never leaves a
   * hole behind the next one. Absent: not checked.
   */
  applyBatch(batch: readonly ProjectedEvent[], follows?: bigint | null): Promise<void>;
  checkpoint(): Promise<bigint | null>;
}

export interface ActiveGeneration {
  name: string;
  checkpoint: bigint | null;
  /** The log the active views belong to (null: none recorded). */
  logIdentity: string | null;
  /** The log whose projector is live on the views now, or null (see ProjectionStore.markLiveWriter). */
  liveWriter: string | null;
  /** The version of the rules the active views were built by (readModel/readModelVersion.ts); null: not recorded (1). */
  rules: string | null;
}

export type ActivationResult =
  /** `previousCheckpoint`: where the previous generation stood at the switch (null: it held no views, none ever applied). */
  | { outcome: 'switched'; previous: string; previousCheckpoint: bigint | null }
  /** The live projector is elsewhere in the log than the new generation: catch up or wait, then retry. */
  | { outcome: 'differ'; live: bigint | null; built: bigint | null }
  /** Someone else switched meanwhile; this generation is not needed. */
  | { outcome: 'moved'; active: string };

export interface ProjectionGenerations {
  active(): Promise<ActiveGeneration>;
  /** A fresh, empty generation, recording `logIdentity` as the log it is built from. */
  create(logIdentity?: string): Promise<ProjectionGeneration>;
  /**
   * Atomically makes `generation` active if `expectedActive` still is and, unless
   * `force`, both checkpoints are equal; ends a hold. Rejects with GenerationLost (nothing switched) when the
   * generation no longer records the log it was created for: the store lost its data while it was built.
   */
  activate(generation: ProjectionGeneration, expectedActive: string, force: boolean): Promise<ActivationResult>;
  /**
   * Holds the live projector still (at most `ms`), so that a rebuild chasing a
   * busy log can meet its checkpoint; it resumes on activate() or releaseLive().
   */
  holdLive(generation: ProjectionGeneration, ms: number): Promise<void>;
  releaseLive(generation: ProjectionGeneration): Promise<void>;
  /** Deletes a generation's views (never the active one). */
  drop(name: string): Promise<void>;
  /**
   * Marks `name`, the generation just switched away from, as one to delete: unless drop() has deleted it `ms` from
   * now, it is a leftover from then on (leftovers(): `projections status` lists it, the next rebuild drops it), not
   * kept for good when its drop fails or the rebuild is killed in its grace. Not a generation being built
   * (beingBuilt() does not list it). Absent: the store cannot mark it.
   */
  markForDrop?(name: string, ms: number): Promise<void>;
  /**
   * Generations that are neither active nor being built by a live rebuild: what rebuilds killed outright (SIGKILL, a
   * crash) left behind, which nothing else ever deletes. Absent: the store cannot tell them.
   */
  leftovers?(): Promise<string[]>;
  /** Generations a live rebuild is building now (its mark renewed): another rebuild would only duplicate its work. Absent: the store cannot tell. */
  beingBuilt?(): Promise<string[]>;
  /**
   * Every generation the store holds besides the active one that nothing else is about to delete: kept on purpose
   * (--keep-previous, a take-over at start) and leftovers (leftovers()); not one being built, nor one a rebuild
   * switched away from and deletes after its grace. `mailbox projections drop` deletes one of these. Absent: the store
   * cannot list them.
   */
  droppable?(): Promise<string[]>;
}

/**
 * A batch given to a generation that does not hold everything before it yet (the batch before it failed, perhaps
 * without ever reaching the store): nothing of it was applied. The rebuild goes on from where the generation stands.
 */
export class GenerationGap extends Error {
  constructor(
    readonly generation: string,
    readonly stands: bigint | null,
    readonly follows: bigint,
  ) {
    super(
      `generation ${generation} stands at ${stands ?? 'nothing'}, short of position ${follows} that this batch follows ` +
        '(the batch before it did not go in): nothing of it was applied',
    );
    this.name = 'GenerationGap';
  }
}

/**
 * The store lost what a generation held while it was being built (Redis restarted empty or flushed): what went in
 * after is only part of the log and names no log, so it is never switched to (served, it was taken for another log's
 * views and every read was refused). The active views are the live projector's to rebuild.
 */
export class GenerationLost extends Error {
  /** `message`: the words of where it was found (the rebuild's copy, after an outage); `cause`: the failure then. */
  constructor(
    readonly generation: string,
    message?: string,
    options?: ErrorOptions,
  ) {
    super(
      message ??
        `generation ${generation} lost what it held while it was being built (the views store lost its data: Redis ` +
          'restarted empty or flushed); it was not switched to',
      options,
    );
    this.name = 'GenerationLost';
  }
}

/**
 * The store could not write the generation being built because another process holds the views (the SQLite views file
 * locked past the wait for it): no wait of the rebuild's mends it, an operator must. `message` says what is locked and
 * what likely holds it, `operatorAction` what to do; the rebuild says it with which views are served and what became of
 * its generation. It ended as INTERNAL with SQLite's words alone ('database is locked').
 */
export class GenerationBlocked extends Error {
  constructor(
    readonly generation: string,
    message: string,
    readonly operatorAction: string,
    readonly details: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'GenerationBlocked';
  }
}
