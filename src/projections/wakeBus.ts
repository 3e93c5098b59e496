/** The wake bus port: hints that mail arrived. The inbox stays the authority. */
import type { WakeEvent } from './viewChanges';

export type WakeListener = (wake: WakeEvent) => void;
/**
 * Called when wakes may have been missed while the subscription stayed open (the bus lost its
 * connection and subscribed again): the subscriber re-reads the unread view. Called once the
 * subscription is whole again, so no wake after it is missed.
 */
export type WakeGapListener = () => void;
export type Unsubscribe = () => Promise<void>;

export interface WakeBus {
  publish(wakes: readonly WakeEvent[]): Promise<void>;
  subscribe(identity: string, listener: WakeListener, onGap?: WakeGapListener): Promise<Unsubscribe>;
  close(): Promise<void>;
}
