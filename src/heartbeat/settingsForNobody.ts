/**
 * The identities the heartbeat settings name (the --opt-out list, the agents file's keys) that no active agent
 * answers to. The daemon matched them silently: a typo in the agents file ("@bob" for "@b0b") left @b0b without
 * its webhook and nudged into the log, and nothing said that the entry applied to nobody. Pure; the daemon reports
 * the result in each tick and warns when it changes.
 */
import type { HeartbeatSettings } from './heartbeatSettings';

export interface SettingsForNobody {
  /** Named in the settings, never registered (yet): the entry applies to nobody until it is. */
  unregistered: string[];
  /** Named in the settings, retired: never nudged, so the entry is never used. */
  retired: string[];
}

export function settingsForNobody(
  settings: Pick<HeartbeatSettings, 'optOut' | 'agents'>,
  agents: ReadonlyArray<{ identity: string; retired: boolean }>,
): SettingsForNobody {
  const status = new Map(agents.map((agent) => [agent.identity, agent.retired]));
  const named = [...new Set([...settings.optOut, ...Object.keys(settings.agents)])].sort();
  return {
    unregistered: named.filter((identity) => !status.has(identity)),
    retired: named.filter((identity) => status.get(identity) === true),
  };
}

export const isEmpty = ({ unregistered, retired }: SettingsForNobody): boolean =>
  unregistered.length === 0 && retired.length === 0;
