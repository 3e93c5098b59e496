/** Live flow: every accepted command as it happens, newest first, filterable by agent, thread and type. */
import { Component, type JSX } from 'preact';
import { useState } from 'preact/hooks';
import { bidiControlsShown } from '../format';
import { Instant, WithInstants } from '../instant';
import type { FlowEntry } from '../types';
import type { FlowQuery, LiveFlow } from '../useLiveFlow';

const TYPES = [
  'MessageSent',
  'BroadcastDelivered',
  'ReceiptRead',
  'MessageArchived',
  'MessageUnarchived',
  'MessagesSeen',
  'WakeObserved',
  'WakeEscalated',
  'ReplyRequested',
  'ReplyOverdue',
  'AgentRegistered',
  'AgentRetired',
  'AgentTokenRotated',
  'TaskClaimed',
  'TaskStateChanged',
  'TaskArtifactAdded',
  'TaskLeaseRenewed',
  'TaskReleased',
  'TaskLeaseExpired',
  'TaskExpired',
  'TaskOutcomeSeen',
];

function describe(entry: FlowEntry): string | JSX.Element {
  switch (entry.type) {
    case 'MessageSent':
      // The subject is the sender's text: isolated (bdi), a right-to-left override in it cannot reverse what follows.
      return (
        <>
          {`${entry.from} → ${entry.to}${entry.to?.startsWith('AGENT:') ? ` (audience ${entry.audienceSize})` : ''}: “`}
          <bdi>{entry.subject}</bdi>
          {`” [${entry.priority}]${entry.taskOpenedAs ? ` · opens a task (${entry.taskOpenedAs})` : ''}`}
        </>
      );
    case 'BroadcastDelivered':
      return `delivered to ${entry.recipient} (broadcast from ${entry.from})`;
    case 'ReceiptRead':
      return `read by ${entry.recipient}`;
    case 'MessageArchived':
      return `archived by ${entry.recipient}`;
    case 'MessageUnarchived':
      return `unarchived by ${entry.recipient}`;
    case 'AgentRegistered':
      return `${entry.identity} registered (${entry.role})`;
    case 'AgentRetired':
      return `${entry.identity} retired`;
    case 'AgentTokenRotated':
      return `${entry.identity} got a new token`;
    case 'WakeObserved':
      // Its author is the server ('system:wake-streams'): the row names who was woken, or a broadcast's read alike.
      return (
        <>
          {`${entry.recipient} `}
          <WithInstants text={entry.detail ?? ''} />
        </>
      );
    default:
      // The server writes the instants in it exactly (UTC ISO): each reads as a local time, the exact one in its tooltip.
      return entry.detail === undefined ? entry.agents.join(', ') : <WithInstants text={bidiControlsShown(entry.detail)} />;
  }
}

/** A row is drawn once: entries never change, so a render of 500 rows only diffs the new ones. */
class FlowRow extends Component<{ entry: FlowEntry; onOpenStory: (id: string) => void }> {
  override shouldComponentUpdate(next: { entry: FlowEntry }) {
    return next.entry !== this.props.entry;
  }

  override render() {
    const { entry, onOpenStory } = this.props;
    return (
      <tr data-type={entry.type}>
        <td>{entry.position}</td>
        <td>
          <Instant iso={entry.at} style="time" />
        </td>
        <td>{entry.type}</td>
        <td>{entry.actor}</td>
        <td class="what">{describe(entry)}</td>
        <td>
          {entry.messageId && (
            <button type="button" class="link" onClick={() => onOpenStory(entry.messageId!)}>
              story<span class="visually-hidden"> of message {entry.messageId}</span>
            </button>
          )}
        </td>
      </tr>
    );
  }
}

export function LiveFlowPanel(props: {
  flow: LiveFlow;
  query: FlowQuery;
  onQuery: (q: FlowQuery) => void;
  onOpenStory: (id: string) => void;
}) {
  const { flow, query, onQuery, onOpenStory } = props;
  const [draft, setDraft] = useState<FlowQuery>(query);
  const field = (name: keyof FlowQuery) => (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value });
  const apply = (e: Event) => {
    e.preventDefault();
    onQuery({
      agent: draft.agent?.trim() || undefined,
      threadId: draft.threadId?.trim() || undefined,
      type: draft.type || undefined,
    });
  };
  const { view, held } = flow;
  const counts = held ?? view;
  return (
    <section aria-labelledby="flow-title">
      <h2 id="flow-title">Live flow</h2>
      <form class="filters" onSubmit={apply} data-testid="flow-filters">
        <label>
          Agent <input name="agent" placeholder="@neo-gpt" value={draft.agent ?? ''} onInput={field('agent')} />
        </label>
        <label>
          Thread <input name="threadId" value={draft.threadId ?? ''} onInput={field('threadId')} />
        </label>
        <label>
          Type{' '}
          <select name="type" value={draft.type ?? ''} onChange={field('type')}>
            <option value="">all</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Apply filter</button>
        <button type="button" onClick={() => flow.setPaused(!flow.paused)} aria-pressed={flow.paused}>
          {flow.paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" onClick={flow.clear}>
          Clear
        </button>
      </form>
      <p class="status" aria-live="polite" data-testid="flow-status">
        Stream: {flow.status} · {counts.received} received
        {counts.dropped ? `, ${counts.dropped} older rows no longer shown` : ''}
        {held &&
          (held.pending === 0
            ? ' · paused: new entries are held, not shown, until Resume'
            : ` · paused: ${held.pending} new ${held.pending === 1 ? 'entry' : 'entries'} held, not shown (Resume shows them)`)}
      </p>
      {view.received === 0 && flow.openedAfter !== undefined && (
        // An empty table under "0 received" read as an empty log: the flow shows only what is written from now on.
        <p class="status" data-testid="flow-empty">
          {/* While its stream is down the flow cannot know what was written: it says what it received, no more. */}
          {`No event ${query.agent || query.threadId || query.type ? 'matching the filter ' : ''}${
            flow.live ? 'written' : 'received'
          } since this flow opened ${flow.openedAfter === null ? 'on an empty log' : `at log position ${flow.openedAfter}`}${
            flow.live
              ? ': it shows events as they are written.'
              : '; its stream is not live now: events written meanwhile show once it is back.'
          } Earlier ones: a message's story (Message story), or GET /v1/audit/events.`}
        </p>
      )}
      <table class="flow" data-testid="flow">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">By</th>
            <th scope="col">What</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {view.shown.map((entry) => (
            <FlowRow key={entry.position} entry={entry} onOpenStory={onOpenStory} />
          ))}
        </tbody>
      </table>
    </section>
  );
}
