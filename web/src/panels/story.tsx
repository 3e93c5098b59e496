/** Message story: one message's audience, each recipient's state, its delivery ledger and its task's history (GET /v1/audit/messages/{id}). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { Instant, WithInstants } from '../instant';
import type { AgentRow, MessageStory } from '../types';
import { LedgerSection } from './ledger';

/** A receipt in a recipient's row: when (as a table cell says it) and at which position of the log. */
const Stamp = ({ iso, position }: { iso: string; position: number | string | null }) => (
  <>
    <Instant iso={iso} style="compact" /> (#{position})
  </>
);

/**
 * Why a recipient will not read the message, if it will not: the name is no agent's (a send to an unregistered name is
 * accepted with a warning), or its agent is retired. Null when the agents could not be read: nothing is claimed.
 */
function Holder({ identity, agents }: { identity: string; agents: Map<string, AgentRow> | null }) {
  const agent = agents?.get(identity);
  if (!agents || (agent && !agent.retired)) return null;
  if (!agent) return <> (no agent holds this name: it is read only if an agent registers as {identity})</>;
  return (
    <>
      {' (retired '}
      <Instant iso={agent.retiredAt} style="compact" />: it will not read this)
    </>
  );
}

/** "3 recipient(s)", with how many of them no agent holds and how many are retired. */
function audienceText(recipients: string[], agents: Map<string, AgentRow> | null): string {
  const count = `${recipients.length} recipient(s)`;
  if (!agents) return count;
  const unheld = recipients.filter((r) => !agents.has(r)).length;
  const retired = recipients.filter((r) => agents.get(r)?.retired).length;
  const notes = [unheld ? `${unheld} no agent holds` : '', retired ? `${retired} retired` : ''].filter(Boolean);
  return notes.length ? `${count}: ${notes.join(', ')}` : count;
}

export function StoryPanel(props: {
  messageId: string;
  onMessageId: (id: string) => void;
  onShowThread: (threadId: string) => void;
}) {
  const [draft, setDraft] = useState(props.messageId);
  const [story, setStory] = useState<MessageStory | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Who holds each recipient's name now (the agents table's read): a story says which inboxes nobody will read.
  const [agents, setAgents] = useState<Map<string, AgentRow> | null>(null);
  // The field follows the id asked for from elsewhere (a flow row's link), but not on mount: effects run after paint,
  // and an id typed in right after opening the panel must not be wiped.
  const shown = useRef(props.messageId);
  useEffect(() => {
    if (shown.current !== props.messageId) setDraft(props.messageId);
    shown.current = props.messageId;
    setStory(null);
    setError(null);
    if (!props.messageId) return;
    api<MessageStory>('GET', `/v1/audit/messages/${encodeURIComponent(props.messageId)}`).then(setStory, (e: unknown) =>
      setError(errorText(e)),
    );
    setAgents(null);
    api<{ agents: AgentRow[] }>('GET', '/v1/audit/agents').then(
      ({ agents: rows }) => setAgents(new Map(rows.map((row) => [row.identity, row]))),
      () => setAgents(null), // the story stands without it; the Agents panel says what failed
    );
  }, [props.messageId]);
  const sent = story?.sent;
  return (
    <section aria-labelledby="story-title">
      <h2 id="story-title">Message story</h2>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          props.onMessageId(draft.trim());
        }}
      >
        <label>
          Message id <input value={draft} size={40} onInput={(e) => setDraft((e.target as HTMLInputElement).value)} required />
        </label>
        <button type="submit">Show story</button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {story && sent && (
        <div data-testid="story">
          <dl class="facts">
            <dt>Sent</dt>
            <dd>
              <Instant iso={sent.sentAt} /> by {sent.from} to {[sent.to].flat().join(', ')}{' '}
              {sent.isBroadcast ? '(broadcast)' : ''} at position {sent.position}
            </dd>
            <dt>Subject</dt>
            <dd>
              {/* The sender's text, isolated: a right-to-left override in it cannot reverse the words after it. */}“
              <bdi>{sent.subject}</bdi>” · priority {sent.priority} · {sent.bodyBytes} {sent.bodyBytes === 1 ? 'byte' : 'bytes'}
            </dd>
            <dt>Thread</dt>
            <dd>
              {sent.threadId}{' '}
              <button type="button" class="link" onClick={() => props.onShowThread(sent.threadId)}>
                show this thread in the live flow
              </button>
            </dd>
            <dt>Audience</dt>
            <dd>{audienceText(story.audience, agents)}</dd>
          </dl>
          <table data-testid="recipients">
            <thead>
              <tr>
                <th scope="col">Recipient</th>
                <th scope="col">Delivered</th>
                <th scope="col">Read</th>
                <th scope="col">Archived</th>
              </tr>
            </thead>
            <tbody>
              {story.recipients.map((r) => (
                <tr key={r.identity}>
                  <td>
                    {r.identity}
                    <Holder identity={r.identity} agents={agents} />
                  </td>
                  <td>{r.deliveredAt ? <Stamp iso={r.deliveredAt} position={r.deliveredPosition} /> : 'not delivered'}</td>
                  <td>{r.readAt ? <Stamp iso={r.readAt} position={r.readPosition} /> : 'unread'}</td>
                  <td>{r.archivedAt ? <Stamp iso={r.archivedAt} position={r.archivedPosition} /> : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <LedgerSection messageId={story.messageId} />
          {story.task && (
            <>
              <h3>Task (opened as {story.task.openedAs})</h3>
              {story.task.changes.length === 0 ? (
                <p>No change since the send.</p>
              ) : (
                <table data-testid="task-history">
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">#</th>
                      <th scope="col">By</th>
                      <th scope="col">Change</th>
                    </tr>
                  </thead>
                  <tbody>
                    {story.task.changes.map((c) => (
                      <tr key={c.position}>
                        <td>
                          <Instant iso={c.at} style="compact" />
                        </td>
                        <td>{c.position}</td>
                        <td>{c.actor}</td>
                        <td>
                          <WithInstants text={c.text} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </>
          )}
          {story.anomalies.length > 0 && (
            <div role="alert" class="error">
              <h3>The log contradicts itself here</h3>
              <ul>
                {story.anomalies.map((a) => (
                  <li key={a}>
                    <WithInstants text={a} />
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
