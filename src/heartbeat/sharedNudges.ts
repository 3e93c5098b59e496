/**
 * The nudge records of several daemons (Redis, the heartbeat lease): kept beside the lease and written only by its
 * holder, under its fence. A daemon that takes the lease over reads what its predecessor nudged, so an unread set
 * already nudged is not nudged again (it was, once per takeover); a holder that lost the lease in the middle of a
 * tick (paused past it) has its write refused and sends nothing.
 */
import type { FencedRecords } from '../projections/projectorLease';
import type { NudgeCovered, NudgeRecord, NudgeState } from './nudgeDecider';

export interface SharedNudges {
  /** Every agent's last nudge, as the lease's holders recorded it. */
  read(): Promise<NudgeState>;
  /** Records (or, null, forgets) these agents' nudges: false when this daemon does not hold the lease (nothing written). */
  record(changes: ReadonlyMap<string, NudgeRecord | null>): Promise<boolean>;
}

export function sharedNudges(records: FencedRecords, holding: () => { node: string; token: bigint } | null): SharedNudges {
  return {
    read: async () => {
      const state = new Map<string, NudgeRecord>();
      for (const [identity, value] of await records.read()) {
        const record = parsed(value);
        if (record !== null) state.set(identity, record);
      }
      return state;
    },
    record: async (changes) => {
      const holder = holding();
      if (holder === null) return false;
      const entries = new Map([...changes].map(([identity, record]) => [identity, record && JSON.stringify(record)]));
      return records.write(holder.node, holder.token, entries);
    },
  };
}

function parsed(value: string): NudgeRecord | null {
  try {
    const record = JSON.parse(value) as Partial<NudgeRecord>;
    if (typeof record.signature !== 'string' || typeof record.at !== 'number') return null;
    // What it covered, as this version writes it (an earlier version's record has none: its signature alone counts).
    const through = covered(record.through) ? { through: record.through } : {};
    return { signature: record.signature, at: record.at, ...through };
  } catch {
    return null; // not one of ours: as if the agent had never been nudged
  }
}

function covered(value: unknown): value is NudgeCovered {
  if (typeof value !== 'object' || value === null) return false;
  const { mail, tasks } = value as Record<string, unknown>;
  const mailOk =
    mail === null ||
    (typeof mail === 'object' &&
      typeof (mail as Record<string, unknown>).id === 'string' &&
      typeof (mail as Record<string, unknown>).sentAt === 'string');
  return mailOk && (tasks === null || typeof tasks === 'number');
}
