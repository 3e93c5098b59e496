/**
 * What a polled panel says when a read failed: that it could not load (nothing is shown as if it were an answer), or
 * that what it still shows is the last answer, from when, and not current.
 */
import { Instant } from '../instant';
import type { Polled } from '../usePolling';

export function LoadProblem({ what, polled }: { what: string; polled: Polled<unknown> }) {
  if (!polled.error) return null;
  return (
    <p role="alert" class="error" data-testid="load-problem">
      {polled.at === null ? (
        `Could not load ${what}: ${polled.error}`
      ) : (
        <>
          Could not refresh {what}: {polled.error}. Shown below: the last answer, from{' '}
          <Instant iso={new Date(polled.at).toISOString()} />, not current; retrying.
        </>
      )}
    </p>
  );
}
