/**
 * One task as text (`mailbox task show`; --json prints the A2A Task object): who sent it to whom, its state and holder,
 * then its artifacts and history. What agents wrote (subject, notes, artifact text) is escaped as `mailbox read` does.
 */
import type { A2aMessage, A2aTask } from '../../application/taskA2a';
import type { TaskArtifact } from '../../events/types';
import { addresseeText } from '../../events/addressing';
import { oneLine, quoted, textBlock } from '../../support/terminalText';

const when = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

type Part = TaskArtifact['parts'][number];

/** A part on one line: text escaped (a line break shown as \n), data as its JSON, a file as its URI. */
function partText(part: Part): string {
  switch (part.kind) {
    case 'text':
      return oneLine(part.text);
    case 'data':
      return `data ${oneLine(JSON.stringify(part.data))}`;
    case 'file':
      return `file ${oneLine(part.file.uri)}${part.file.mimeType ? ` (${oneLine(part.file.mimeType)})` : ''}`;
  }
}

const historyLine = (line: A2aMessage) =>
  `  ${when(line.metadata.at)}  ${line.metadata.from}  ${line.parts.map(partText).join(' | ')}`;

function artifactLines(artifact: TaskArtifact): string[] {
  const head = artifact.name ? `  ${quoted(artifact.name)}` : '  (unnamed)';
  return [
    head,
    ...artifact.parts.map(
      (part) => `    ${part.kind === 'text' ? textBlock(part.text).split('\n').join('\n    ') : partText(part)}`,
    ),
  ];
}

export function formatTask(task: A2aTask): string {
  const m = task.mailbox;
  const holder = m.assignee
    ? `held by ${m.assignee}${m.claimedAt ? ` since ${when(m.claimedAt)}` : ''}`
    : m.lapsedClaimant
      ? `unclaimed (the lease of ${m.lapsedClaimant} lapsed)`
      : 'unclaimed';
  const lines = [
    `task      ${m.taskId}`,
    `from      ${m.sender}`,
    `to        ${addresseeText(m.to)}${m.audienceSize > 1 ? ` (audience of ${m.audienceSize})` : ''}`,
    `subject   ${oneLine(m.subject)}`,
    `state     ${m.state}, ${holder}${m.lease ? `, lease to ${when(m.lease.expiresAt)}` : ''}`,
    ...(m.deadline ? [`deadline  ${when(m.deadline)}`] : []),
    `updated   ${when(task.status.timestamp)}`,
    `thread    ${oneLine(task.contextId)}`,
  ];
  if (task.artifacts.length) lines.push('', `artifacts (${task.artifacts.length})`, ...task.artifacts.flatMap(artifactLines));
  lines.push('', 'history', ...task.history.map(historyLine));
  return lines.join('\n');
}
