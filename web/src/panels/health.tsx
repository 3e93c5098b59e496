/**
 * Health: readiness (event store, projection store, projection lag) as /readyz reports it, and the unwoken
 * alarm as /metrics counts it (GET /v1/audit/unwoken: same SLA, same clock), refreshed every 5 s.
 */
import { api, ApiError } from '../api';
import { Instant } from '../instant';
import type { UnwokenAlarm } from '../types';
import { usePolling } from '../usePolling';
import { LoadProblem } from './loadProblem';

/** How many of the oldest unwoken messages the panel lists (the count covers all). */
const OLDEST = 5;

export interface Checks {
  status?: string;
  eventStore: { ok: boolean; head?: string | null; error?: string };
  projectionStore: { ok: boolean; backend: string; checkpoint?: string | null; error?: string };
  projections: {
    ok: boolean;
    running: boolean;
    lag: number | null;
    /** The count stopped there (EventStoreDB, read to count): that many events behind or more. */
    lagAtLeast?: true;
    lastError: string | null;
    /** When the projector last met lastError (absent from servers before it was reported). */
    lastErrorAt?: string | null;
    /** After a failure, when the projector tries again at the latest (absent from servers before it was reported). */
    retryingBy?: string | null;
    views: string;
    viewsProblem?: string;
    /** Absent from servers older than the projector lease. */
    leadership?:
      | { role: 'alone' }
      | { role: 'leading'; node: string; token: string }
      | { role: 'following'; node: string; leader: string | null; token: string | null };
  };
}

/**
 * Where the views live, as /readyz names the store: only memory views are in process; SQLite views are in the views
 * file beside the log (durable); a store this console does not know is named as the server names it.
 */
function storeText(backend: string): string {
  if (backend === 'redis') return 'Redis';
  if (backend === 'sqlite') return 'SQLite views file beside the log';
  if (backend === 'memory') return 'in process';
  return backend;
}

/** Whose views these are, as /readyz says it ('own', 'foreign', 'unchecked'), in words. */
function viewsText(views: string): string {
  if (views === 'own') return 'the views are this log’s';
  if (views === 'foreign')
    return 'the views are another log’s: never served nor applied to (give this mailbox its own MAILBOX_REDIS_NAMESPACE, or take them over: docs/operators.md, Views belong to one log)';
  if (views === 'unchecked') return 'whose views these are is not checked yet';
  return `views ${views}`;
}

/**
 * Who projects, as /readyz says it. The lease is kept in the projection store: while that does not answer, no leader
 * can be seen and none can take the lease, so "a node takes the free lease" would promise what cannot happen.
 */
function leaderText(leadership: Checks['projections']['leadership'], storeAnswers: boolean): string {
  if (!leadership) return 'not reported by this server';
  if (leadership.role === 'alone') return 'this server (views of its own: no lease needed)';
  if (leadership.role === 'leading') return `this node (${leadership.node}), lease token ${leadership.token}`;
  if (leadership.leader === null && !storeAnswers)
    return `unknown: the lease is kept in the projection store, which does not answer (this node ${leadership.node} follows; no node can take the lease until it answers)`;
  if (leadership.leader === null)
    return `none seen yet (this node ${leadership.node} follows; a node takes the free lease within its renewal)`;
  return `${leadership.leader}, lease token ${leadership.token} (this node ${leadership.node} follows)`;
}

/**
 * The failure the projector is in now, and when it last met it: the runner retries, so a failure met a moment ago
 * is still going on, one met long ago (nothing applied since) may be over; the time tells which.
 */
function LastError({ lastError, lastErrorAt, retryingBy }: Checks['projections']) {
  if (!lastError) return null;
  return (
    <>
      · last error: {lastError}
      {lastErrorAt && (
        <>
          {' (last met at '}
          <Instant iso={lastErrorAt} />)
        </>
      )}
      {retryingBy && (
        <>
          {' · tries again by '}
          <Instant iso={retryingBy} />
        </>
      )}
    </>
  );
}

export async function readiness(): Promise<Checks> {
  try {
    return await api<Checks>('GET', '/readyz', undefined, null);
  } catch (error) {
    // 503 still carries the checks: show what failed rather than only that something did.
    if (error instanceof ApiError && error.envelope.checks) return { status: 'not ready', ...(error.envelope.checks as Checks) };
    throw error;
  }
}

const Ok = ({ ok }: { ok: boolean }) => <strong class={ok ? 'ok' : 'bad'}>{ok ? 'OK' : 'FAILING'}</strong>;

const unwokenAlarm = () => api<UnwokenAlarm>('GET', `/v1/audit/unwoken?limit=${OLDEST}`);

function Unwoken({ onOpenStory }: { onOpenStory: (id: string) => void }) {
  const alarm = usePolling(unwokenAlarm, 5000);
  const a = alarm.data;
  if (alarm.error) return <span class="bad">{alarm.error}</span>;
  if (!a) return <span>…</span>;
  const sla = `${a.slaMs / 1000} s`;
  if (a.count === 0)
    return (
      <span data-testid="unwoken">
        {/* Not "every message woke a recipient": one younger than the SLA may have woken nobody yet, and one that every
        recipient due a wake saw or read needs no wake. */}
        <strong class="ok">none</strong>: no message has gone {sla} without waking a recipient (mail that all its recipients due a
        wake saw or read needs no wake)
      </span>
    );
  return (
    <div data-testid="unwoken">
      <strong class="bad">
        {a.count} message{a.count === 1 ? '' : 's'} woke none of {a.count === 1 ? 'its' : 'their'} recipients within {sla}
      </strong>
      <table data-testid="unwoken-oldest">
        <caption>
          {a.messages.length === a.count ? `All ${a.count}` : `The oldest ${a.messages.length} of ${a.count}`}, oldest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Sent</th>
            <th scope="col">Waiting</th>
            <th scope="col">From</th>
            <th scope="col">Recipients</th>
            <th scope="col">Escalated</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {a.messages.map((m) => (
            <tr key={m.messageId}>
              <td>
                <Instant iso={m.sentAt} style="time" />
              </td>
              <td>
                <Instant iso={m.sentAt} style="age" />
              </td>
              <td>{m.sender}</td>
              <td>{m.recipientCount}</td>
              <td>{m.escalatedAt ? <Instant iso={m.escalatedAt} style="compact" /> : 'not yet'}</td>
              <td>
                <button type="button" class="link" onClick={() => onOpenStory(m.messageId)}>
                  story<span class="visually-hidden"> of message {m.messageId}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function HealthPanel({ onOpenStory }: { onOpenStory: (id: string) => void }) {
  const health = usePolling(readiness, 5000);
  const c = health.data;
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      <LoadProblem what="the server's readiness (/readyz)" polled={health} />
      {c && (
        <dl class={health.current ? 'facts' : 'facts stale'} data-testid="health">
          <dt>Status</dt>
          {/* A readiness nobody answered now is unknown: the last answer is said as such, never as the status. */}
          <dd>
            {health.current ? (
              c.status
            ) : (
              <>
                unknown (the last answer, from <Instant iso={new Date(health.at!).toISOString()} />, said {c.status})
              </>
            )}
          </dd>
          <dt>Event store</dt>
          <dd>
            <Ok ok={c.eventStore.ok} /> head {c.eventStore.head ?? '(empty log)'} {c.eventStore.error ?? ''}
          </dd>
          <dt>Projection store ({storeText(c.projectionStore.backend)})</dt>
          <dd>
            <Ok ok={c.projectionStore.ok} /> checkpoint {c.projectionStore.checkpoint ?? '–'} {c.projectionStore.error ?? ''}
          </dd>
          <dt>Projection lag</dt>
          <dd data-testid="projections">
            <Ok ok={c.projections.ok} /> {c.projections.lagAtLeast ? 'at least ' : ''}
            {c.projections.lag ?? '?'} events behind · runner {c.projections.running ? 'running' : 'stopped'} ·{' '}
            {viewsText(c.projections.views)} <LastError {...c.projections} /> {c.projections.viewsProblem ?? ''}
          </dd>
          <dt>Leader</dt>
          <dd data-testid="leader">{leaderText(c.projections.leadership, c.projectionStore.ok)}</dd>
          <dt>Unwoken alarms</dt>
          <dd>
            <Unwoken onOpenStory={onOpenStory} />
          </dd>
        </dl>
      )}
    </section>
  );
}
