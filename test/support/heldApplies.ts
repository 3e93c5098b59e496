/**
 * Holds a projection store's applies until released: the views stop moving
 * while the log keeps growing, as when the projection backend stalls. Wraps
 * the very instance the runner applies to (its applyBatch), so nothing else changes.
 */
import type { ProjectionStore } from '../../src/projections/projectionStore';

export interface HeldApplies {
  /** Batches that arrived while held (each waits for release). */
  readonly waiting: number;
  release(): void;
}

export function holdApplies(store: ProjectionStore): HeldApplies {
  const original = store.applyBatch.bind(store);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let waiting = 0;
  store.applyBatch = async (batch, options) => {
    waiting++;
    await gate;
    return original(batch, options);
  };
  return {
    get waiting() {
      return waiting;
    },
    release() {
      store.applyBatch = original;
      release();
    },
  };
}

export interface FailingApplies {
  /** Lets the applies through again (the next batch lands). */
  recover(): void;
}

/** Makes a projection store's applies fail (as a views store that hiccups) until recovered. */
export function failApplies(store: ProjectionStore, message = 'the views store hiccuped'): FailingApplies {
  const original = store.applyBatch.bind(store);
  let failing = true;
  store.applyBatch = async (batch, options) => {
    if (failing) throw new Error(message);
    return original(batch, options);
  };
  return {
    recover() {
      failing = false;
    },
  };
}
