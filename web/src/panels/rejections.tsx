/** Rejections: recent refused commands, by agent and code, with what each caller was told (they write no events). */
import { api } from '../api';
import { bidiControlsShown } from '../format';
import { Instant } from '../instant';
import type { RejectionRecord } from '../types';
import { usePolling } from '../usePolling';
import { LoadProblem } from './loadProblem';

interface Page {
  rejections: RejectionRecord[];
  capacity: number;
  backend: string;
}

/**
 * What was refused, as the refusal named it: the recipient (a list's wrong entry first), the agent a registry command
 * did not find, the field. A suggestion beside a blank read as a recipient to write to ("subject" for a misspelt field).
 */
function refused(r: RejectionRecord): string {
  const parts: string[] = [];
  if (r.entry !== undefined) parts.push(`entry ${r.entry} of to: ${r.to ?? ''}`);
  else if (r.to !== undefined) parts.push(`to: ${r.to}`);
  if (r.identity !== undefined) parts.push(`agent: ${r.identity}`);
  if (r.field !== undefined && r.field !== 'to') parts.push(`field: ${r.field}`);
  return bidiControlsShown(parts.join(' · '));
}

/** Who was refused: the agent, or a token that was itself refused (no caller known). */
const caller = (r: RejectionRecord): string => r.agent ?? '(token refused)';

export function RejectionsPanel() {
  const page = usePolling(() => api<Page>('GET', '/v1/audit/rejections?limit=200'), 2000);
  const rows = page.data?.rejections ?? [];
  const byAgentAndCode = new Map<string, number>();
  for (const r of rows) {
    const key = `${caller(r)} · ${r.code}`;
    byAgentAndCode.set(key, (byAgentAndCode.get(key) ?? 0) + 1);
  }
  const top = [...byAgentAndCode].sort((a, b) => b[1] - a[1]).slice(0, 8);
  return (
    <section aria-labelledby="rejections-title">
      <h2 id="rejections-title">Rejections</h2>
      <LoadProblem what="the rejections" polled={page} />
      {/* Counts are said only of an answer: before the first (or when none came) there is nothing to count. */}
      {page.data ? (
        <p class="status">
          {rows.length === 0
            ? `No refused command on record (the newest ${page.data.capacity} are kept, ${page.data.backend})`
            : `Newest ${rows.length} of the last ${page.data.capacity} kept (${page.data.backend})`}
          {page.current ? '' : ', not current'}; counters for all time are in /metrics (mailbox_commands_total,
          outcome="rejected").
        </p>
      ) : (
        !page.error && <p class="status">Loading the rejections…</p>
      )}
      {top.length > 0 && (
        // Bare chips ("@a · INVALID_RECIPIENT_SHAPE: 2") did not say what they count, nor that it is over these rows only.
        <>
          <p class="status" id="rejection-counts-title">
            Refused commands among the newest {rows.length} on record, by caller and code
            {top.length < byAgentAndCode.size ? ` (the ${top.length} most frequent)` : ''}:
          </p>
          <ul class="chips" aria-labelledby="rejection-counts-title">
            {top.map(([key, count]) => (
              <li key={key}>
                {key}: {count}
              </li>
            ))}
          </ul>
        </>
      )}
      <table data-testid="rejections" class={page.current ? 'rejections' : 'rejections stale'}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Agent</th>
            <th scope="col">Command</th>
            <th scope="col">Code</th>
            <th scope="col">Refused</th>
            <th scope="col">Suggested instead</th>
            <th scope="col">Told</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={`${r.at}-${i}`}>
              <td>
                <Instant iso={r.at} style="compact" />
              </td>
              <td>{caller(r)}</td>
              <td>
                {r.command} ({r.surface})
              </td>
              <td>{r.code}</td>
              <td>{refused(r)}</td>
              {/* The refusal's own suggestions, nothing else: none offered is a blank. */}
              <td>
                {r.suggestions && (
                  <>
                    {/* Its column's name, where the columns are not drawn (a narrow window). */}
                    <span class="narrow-only">suggested instead: </span>
                    {bidiControlsShown(r.suggestions.join(', '))}
                  </>
                )}
              </td>
              <td>{bidiControlsShown(r.message)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
