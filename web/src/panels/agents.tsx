/**
 * Agents: identity, role, unread and oldest unread age, last activity, open wake
 * streams, last nudge (the heartbeat's newest delivered nudge, from the delivery ledger's views), retired; sortable. Admins also register, retire and issue a new token,
 * each after a confirmation, each an ordinary command of the API.
 */
import { useMemo, useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { Instant, WithInstants } from '../instant';
import type { AgentRow } from '../types';
import { usePolling } from '../usePolling';
import { ConfirmDialog, type Pending } from './confirm';
import { readiness } from './health';
import { LoadProblem } from './loadProblem';

const PAGE_ROWS = 100;

/** What the notice under the form says: an action's outcome (a token issued beside it), or that it waits (busy). */
type Notice = { text: string; token?: string; busy?: boolean };

type Column = 'identity' | 'role' | 'unreadCount' | 'oldestUnreadAt' | 'lastActivityAt' | 'wakeStreams' | 'lastNudge' | 'retired';
const COLUMNS: Array<{ key: Column; label: string }> = [
  { key: 'identity', label: 'Identity' },
  { key: 'role', label: 'Role' },
  { key: 'unreadCount', label: 'Unread' },
  { key: 'oldestUnreadAt', label: 'Oldest unread' },
  { key: 'lastActivityAt', label: 'Last send or read' },
  { key: 'wakeStreams', label: 'Wake streams' },
  { key: 'lastNudge', label: 'Last nudge' },
  { key: 'retired', label: 'Retired' },
];

/** What a column sorts by: the nudge by its time (ISO strings sort as times). */
const sortValue = (row: AgentRow, key: Column) => (key === 'lastNudge' ? (row.lastNudge?.at ?? null) : row[key]);

function compare(a: AgentRow, b: AgentRow, key: Column, descending: boolean): number {
  const x = sortValue(a, key);
  const y = sortValue(b, key);
  if (x === y) return a.identity < b.identity ? -1 : 1;
  if (x === null) return 1; // "never" sorts last either way
  if (y === null) return -1;
  return (x < y ? -1 : 1) * (descending ? -1 : 1);
}

export function AgentsPanel({ isAdmin }: { isAdmin: boolean }) {
  const agents = usePolling(() => api<{ agents: AgentRow[] }>('GET', '/v1/audit/agents'), 5000);
  // The counts are the views': while they lag behind the log, the newest mail is not counted yet, and the table says so.
  const ready = usePolling(readiness, 5000);
  const lag = ready.current ? (ready.data?.projections.lag ?? null) : null;
  const [sort, setSort] = useState<{ key: Column; descending: boolean }>({ key: 'identity', descending: false });
  const [pending, setPending] = useState<Pending | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [newIdentity, setNewIdentity] = useState('');
  const [newRole, setNewRole] = useState('agent');
  const [find, setFind] = useState('');
  const [page, setPage] = useState(0);
  const sorted = useMemo(() => {
    const needle = find.trim().toLowerCase();
    const list = (agents.data?.agents ?? []).filter((a) => !needle || a.identity.toLowerCase().includes(needle));
    return list.sort((a, b) => compare(a, b, sort.key, sort.descending));
  }, [agents.data, sort, find]);
  // One page of rows in the DOM at a time: sorting and finding cover every agent, drawing stays cheap at 1,000 and more.
  const pages = Math.max(1, Math.ceil(sorted.length / PAGE_ROWS));
  const shownPage = Math.min(page, pages - 1);
  const rows = sorted.slice(shownPage * PAGE_ROWS, (shownPage + 1) * PAGE_ROWS);
  /**
   * Runs a confirmed action, saying only what is known at each step: that it waits for the server (`waiting`), then
   * what the server answered: its result, or its refusal (code and message: a refused command writes nothing). With no
   * answer, or a server's failure, the outcome is not known, and the notice says so (`unknown`) rather than claiming it.
   */
  const act = (waiting: string, unknown: string, run: () => Promise<Notice>) => async () => {
    setNotice({ text: waiting, busy: true });
    try {
      setNotice(await run());
    } catch (error) {
      // A refusal (4xx) wrote nothing; a server's failure (5xx: a deadline passed, the store unavailable) may come after it wrote.
      let text: string;
      if (error instanceof ApiError) {
        const { code, message } = error.envelope;
        text =
          error.status < 500
            ? `Refused (${code}): ${message} Nothing was written.`
            : `The server failed (${code}): ${message} ${unknown}`;
      } else text = `No answer from the server (${error instanceof Error ? error.message : String(error)}). ${unknown}`;
      setNotice({ text });
    }
    agents.refresh();
  };
  const retire = (identity: string) =>
    setPending({
      title: `Retire ${identity}?`,
      detail: `${identity}'s token stops working at once, its wake streams end, and later broadcasts leave it out. The broadcast tasks it holds unfinished go back to their audiences (claimable again); tasks sent to it alone stay as they are. Its history stays in the log.`,
      confirmLabel: `Retire ${identity}`,
      run: act(
        `Retiring ${identity}: waiting for the server…`,
        `Whether ${identity} was retired is not known; the table below shows it.`,
        async () => {
          const done = await api<{ retiredAt: string; releasedTasks?: string[] }>(
            'DELETE',
            `/v1/agents/${encodeURIComponent(identity)}`,
          );
          const released = done.releasedTasks?.length ?? 0;
          return {
            text: `${identity} retired at ${done.retiredAt}.${released ? ` ${released} task(s) it held went back to their audiences.` : ''}`,
          };
        },
      ),
    });
  const rotate = (identity: string) =>
    setPending({
      title: `Issue ${identity} a new token?`,
      detail: `The current token of ${identity} is refused from now on; the new one is shown once.`,
      confirmLabel: 'Issue new token',
      run: act(
        `Issuing ${identity} a new token: waiting for the server…`,
        `Whether ${identity}'s token was replaced is not known; issue another to be sure.`,
        async () => {
          const done = await api<{ token: string }>('POST', `/v1/agents/${encodeURIComponent(identity)}/token`);
          return { text: `New token for ${identity} (shown once; copy it now):`, token: done.token };
        },
      ),
    });
  const register = (e: Event) => {
    e.preventDefault();
    const identity = newIdentity.trim();
    setPending({
      title: `Register ${identity} as ${newRole}?`,
      // Nothing is written yet: the server decides (a name taken, or no identity, is refused and writes nothing).
      detail: `The server is asked to register a new ${newRole} ${identity}. Only if it accepts is the registration written to the log and its token shown, once; if it refuses, nothing is written and its reason is shown.`,
      confirmLabel: `Register ${identity}`,
      run: act(
        `Registering ${identity}: waiting for the server… (nothing is written until it accepts)`,
        `Whether ${identity} was registered is not known; the table below shows it once it is.`,
        async () => {
          const done = await api<{ identity: string; token: string }>('POST', '/v1/agents', { identity, role: newRole });
          setNewIdentity('');
          return {
            text: `${done.identity} registered, written to the log; its token (shown once; copy it now):`,
            token: done.token,
          };
        },
      ),
    });
  };
  return (
    <section aria-labelledby="agents-title">
      <h2 id="agents-title">Agents</h2>
      {isAdmin && (
        <form class="filters" onSubmit={register} data-testid="register">
          <label>
            New identity{' '}
            <input
              value={newIdentity}
              onInput={(e) => setNewIdentity((e.target as HTMLInputElement).value)}
              placeholder="@neo-gpt"
              required
            />
          </label>
          <label>
            Role{' '}
            <select value={newRole} onChange={(e) => setNewRole((e.target as HTMLSelectElement).value)}>
              <option value="agent">agent</option>
              <option value="auditor">auditor</option>
            </select>
          </label>
          <button type="submit">Register…</button>
        </form>
      )}
      {notice && (
        <p role="status" class="notice" data-testid="notice" aria-busy={notice.busy === true}>
          <WithInstants text={notice.text} /> {notice.token && <code class="token">{notice.token}</code>}
        </p>
      )}
      <LoadProblem what="the agents" polled={agents} />
      <div class="filters">
        <label>
          Find agent{' '}
          <input value={find} onInput={(e) => (setFind((e.target as HTMLInputElement).value), setPage(0))} placeholder="@agent" />
        </label>
        <button type="button" disabled={shownPage === 0} onClick={() => setPage(shownPage - 1)}>
          Previous
        </button>
        <button type="button" disabled={shownPage >= pages - 1} onClick={() => setPage(shownPage + 1)}>
          Next
        </button>
        <span class="status" data-testid="agents-count">
          {/* No answer yet is not "no agents": the count is said only of an answer. */}
          {agents.data === null
            ? agents.error
              ? 'agents not loaded'
              : 'loading the agents…'
            : `${sorted.length === 0 ? (find.trim() ? 'no agent matches' : 'no agents registered yet (register one above, or: mailbox agent add @name)') : `${shownPage * PAGE_ROWS + 1}–${shownPage * PAGE_ROWS + rows.length} of ${sorted.length} agents`} · page ${shownPage + 1} of ${pages} (wake streams: this node's)${agents.current ? '' : ', not current'}${
                lag !== null && lag > 0
                  ? ` · unread counts from the views, ${lag} event${lag === 1 ? '' : 's'} behind the log: the newest mail may not be counted yet`
                  : ''
              }`}
        </span>
      </div>
      <table data-testid="agents" class={agents.current ? undefined : 'stale'}>
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th
                key={c.key}
                scope="col"
                aria-sort={sort.key === c.key ? (sort.descending ? 'descending' : 'ascending') : undefined}
              >
                <button
                  type="button"
                  class="sort"
                  onClick={() => (setSort({ key: c.key, descending: sort.key === c.key ? !sort.descending : false }), setPage(0))}
                >
                  {c.label}
                </button>
              </th>
            ))}
            {isAdmin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map((agent) => (
            <tr key={agent.identity} class={agent.retired ? 'retired' : undefined}>
              <td>{agent.identity}</td>
              <td>{agent.role}</td>
              <td>{agent.unreadCount}</td>
              <td>
                {/* An age, said as one ("3 min ago"): "3m 20s" read like a time of day or a duration of something else. */}
                <Instant iso={agent.oldestUnreadAt} style="age" />
              </td>
              <td>
                <Instant iso={agent.lastActivityAt} style="compact" />
              </td>
              <td>{agent.wakeStreams}</td>
              <td>
                {agent.lastNudge ? (
                  <>
                    <Instant iso={agent.lastNudge.at} style="compact" /> via {agent.lastNudge.via}
                  </>
                ) : (
                  '–'
                )}
              </td>
              <td>
                {agent.retired ? (
                  <>
                    yes (<Instant iso={agent.retiredAt} style="compact" />)
                  </>
                ) : (
                  'no'
                )}
              </td>
              {isAdmin && (
                <td>
                  {!agent.retired && (
                    <>
                      <button type="button" onClick={() => retire(agent.identity)}>
                        Retire<span class="visually-hidden"> {agent.identity}</span>
                      </button>{' '}
                      <button type="button" onClick={() => rotate(agent.identity)}>
                        New token<span class="visually-hidden"> for {agent.identity}</span>
                      </button>
                    </>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <ConfirmDialog pending={pending} onClose={() => setPending(null)} />
    </section>
  );
}
