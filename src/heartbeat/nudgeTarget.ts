/** The nudge target port: somewhere a nudge can be delivered (Redis channel, webhook, command hook, tests). */
import type { Nudge } from './nudgeDecider';

/**
 * 'delivered': accepted by the target. 'unheard': published, but nobody was
 * listening (Redis pub/sub with no subscriber) — not an error, but reported.
 */
export type DeliveryStatus = 'delivered' | 'unheard';

export interface NudgeTarget {
  /** Short name for logs and metrics labels: 'redis', 'webhook', 'hook'. */
  readonly name: string;
  /** Whether this target serves the agent (a webhook exists only for agents that configured one). */
  appliesTo(identity: string): boolean;
  /** Resolves once delivered (retrying inside as the target sees fit); rejects when it finally failed. */
  deliver(nudge: Nudge): Promise<DeliveryStatus>;
  close(): Promise<void>;
}
