/** Health: readiness (event store, projection store, projection lag) as /readyz reports it, refreshed every 5 s. */
import { api, ApiError } from '../api';
import { usePolling } from '../usePolling';

interface Checks {
  status?: string;
  eventStore: { ok: boolean; head?: string | null; error?: string };
  projectionStore: { ok: boolean; backend: string; checkpoint?: string | null; error?: string };
  projections: {
    ok: boolean;
    running: boolean;
    lag: number | null;
    lastError: string | null;
    views: string;
    viewsProblem?: string;
    /** Absent from servers older than the projector lease. */
    leadership?:
      | { role: 'alone' }
      | { role: 'leading'; node: string; token: string }
      | { role: 'following'; node: string; leader: string | null; token: string | null };
  };
}

/** Who projects, as /readyz says it. */
function leaderText(leadership: Checks['projections']['leadership']): string {
  if (!leadership) return 'not reported by this server';
  if (leadership.role === 'alone') return 'this server (views of its own: no lease needed)';
  if (leadership.role === 'leading') return `this node (${leadership.node}), lease token ${leadership.token}`;
  if (leadership.leader === null)
    return `none seen yet (this node ${leadership.node} follows; a node takes the free lease within its renewal)`;
  return `${leadership.leader}, lease token ${leadership.token} (this node ${leadership.node} follows)`;
}

async function readiness(): Promise<Checks> {
  try {
    return await api<Checks>('GET', '/readyz', undefined, null);
  } catch (error) {
    // 503 still carries the checks: show what failed rather than only that something did.
    if (error instanceof ApiError && error.envelope.checks) return { status: 'not ready', ...(error.envelope.checks as Checks) };
    throw error;
  }
}

const Ok = ({ ok }: { ok: boolean }) => <strong class={ok ? 'ok' : 'bad'}>{ok ? 'OK' : 'FAILING'}</strong>;

export function HealthPanel() {
  const health = usePolling(readiness, 5000);
  const c = health.data;
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {health.error && (
        <p role="alert" class="error">
          {health.error}
        </p>
      )}
      {c && (
        <dl class="facts" data-testid="health">
          <dt>Status</dt>
          <dd>{c.status}</dd>
          <dt>Event store</dt>
          <dd>
            <Ok ok={c.eventStore.ok} /> head {c.eventStore.head ?? '(empty log)'} {c.eventStore.error ?? ''}
          </dd>
          <dt>Projection store ({c.projectionStore.backend === 'redis' ? 'Redis' : 'in process'})</dt>
          <dd>
            <Ok ok={c.projectionStore.ok} /> checkpoint {c.projectionStore.checkpoint ?? '–'} {c.projectionStore.error ?? ''}
          </dd>
          <dt>Projection lag</dt>
          <dd>
            <Ok ok={c.projections.ok} /> {c.projections.lag ?? '?'} events behind · runner{' '}
            {c.projections.running ? 'running' : 'stopped'} · views {c.projections.views}{' '}
            {c.projections.lastError ? `· last error: ${c.projections.lastError}` : ''} {c.projections.viewsProblem ?? ''}
          </dd>
          <dt>Leader</dt>
          <dd data-testid="leader">{leaderText(c.projections.leadership)}</dd>
          <dt>Unwoken alarms</dt>
          <dd>
            not shown: the heartbeat daemon (mailbox heartbeat) raises them in its own log and metrics, which this server does not
            read
          </dd>
        </dl>
      )}
    </section>
  );
}
