/** The wake bus port: hints that mail arrived. The inbox stays the authority. */
import type { WakeEvent } from './viewChanges';

export type WakeListener = (wake: WakeEvent) => void;
export type Unsubscribe = () => Promise<void>;

export interface WakeBus {
  publish(wakes: readonly WakeEvent[]): Promise<void>;
  subscribe(identity: string, listener: WakeListener): Promise<Unsubscribe>;
  close(): Promise<void>;
}
