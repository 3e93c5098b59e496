/** One task event in words, for the audit tools (replay text, a message's story, an agent's timeline). */
import type { TaskEvent } from '../events/types';
import { quoted } from '../support/terminalText';

export function describeTaskEvent(event: TaskEvent, actor: string): string {
  return `task ${event.data.taskId} ${taskEventWords(event, actor)}`;
}

/** What befell the task, without naming it (`claimed by @b`): for a line that names the task already. */
export function taskEventWords(event: TaskEvent, actor: string): string {
  switch (event.type) {
    case 'TaskClaimed': {
      const d = event.data;
      return `claimed by ${d.claimant}${d.leaseExpiresAt ? ` (lease to ${d.leaseExpiresAt})` : ''}`;
    }
    case 'TaskStateChanged': {
      const d = event.data;
      const why = [d.reason && `reason: ${quoted(d.reason)}`, d.note && `note: ${quoted(d.note)}`].filter(Boolean);
      return `${d.from} -> ${d.to} by ${actor}${why.length ? ` (${why.join('; ')})` : ''}`;
    }
    case 'TaskArtifactAdded':
      return `artifact ${event.data.artifact.artifactId} added by ${actor} (${event.data.artifact.parts.length} part(s))`;
    case 'TaskLeaseRenewed':
      return `lease of ${event.data.claimant} renewed to ${event.data.leaseExpiresAt}`;
    case 'TaskReleased':
      // Released by someone else than its claimant: the claimant was retired (its release is the retirement's).
      return event.data.claimant === actor
        ? `released by ${event.data.claimant} (${event.data.from} -> Submitted, claimable again)`
        : `released from ${event.data.claimant}, who was retired, by ${actor} (${event.data.from} -> Submitted, claimable again)`;
    case 'TaskLeaseExpired':
      return `lease of ${event.data.claimant} lapsed at ${event.data.leaseExpiresAt} (${event.data.from} -> Submitted, claimable again)`;
    case 'TaskExpired':
      return `expired at its deadline ${event.data.deadline} (${event.data.from} -> ${event.data.to}, reason "expired")`;
    case 'TaskOutcomeSeen':
      return `outcome (${event.data.state}) seen by its sender ${event.data.sender}`;
    default: {
      const unexpected: never = event;
      return `unknown task event ${(unexpected as TaskEvent).type}`;
    }
  }
}

export const isTaskEvent = (event: { type: string }): event is TaskEvent => event.type.startsWith('Task');
