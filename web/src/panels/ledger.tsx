/**
 * The delivery ledger of one message (GET /v1/messages/{id}/delivery, issue 13): each recipient's stages
 * (accepted, in view, woken and via what, seen, read, replied) and the counts over all recipients. A
 * broadcast's ledger is paged by identity: the panel keeps the cursors it came through, so Previous works.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api';
import type { JSX } from 'preact';
import { Instant } from '../instant';
import type { DeliveryLedger, DeliveryRow } from '../types';

/** Why no wake was due (the ledger's noWakeReason), as the summary says it. */
const NO_WAKE: Record<NonNullable<DeliveryLedger['noWakeReason']>, string> = {
  suppressed: 'sent with wakeSuppressed',
  noRecipient: 'no recipient but its sender',
  noRegisteredRecipient: 'no recipient was a registered agent when sent',
};

const STAGES = [
  ['inView', 'In view'],
  ['woken', 'Woken'],
  ['seen', 'Seen'],
  ['read', 'Read'],
  ['replied', 'Replied'],
] as const;

function stageCell(row: DeliveryRow, stage: (typeof STAGES)[number][0]): JSX.Element | string {
  switch (stage) {
    case 'inView':
      return row.inView ? `#${row.inView.position}` : '–';
    case 'woken':
      return row.woken ? (
        <>
          <Instant iso={row.woken.at} style="compact" /> via {row.woken.via}
        </>
      ) : (
        'not woken'
      );
    case 'replied':
      return row.replied ? <Instant iso={row.replied.at} style="compact" /> : '–';
    default: {
      const mark = row[stage];
      return mark ? <Instant iso={mark.at} style="compact" /> : '–';
    }
  }
}

export function LedgerSection({ messageId }: { messageId: string }) {
  const [perPage, setPerPage] = useState(100);
  // The `after` of every page shown so far: the last is this page's, the one before it Previous's.
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const [ledger, setLedger] = useState<DeliveryLedger | null>(null);
  const [error, setError] = useState<string | null>(null);
  const after = cursors[cursors.length - 1];
  useEffect(() => setCursors([null]), [messageId, perPage]);
  useEffect(() => {
    setError(null);
    const query = new URLSearchParams({ limit: String(perPage), ...(after ? { after } : {}) });
    let current = true;
    api<DeliveryLedger>('GET', `/v1/messages/${encodeURIComponent(messageId)}/delivery?${query}`).then(
      (page) => current && setLedger(page),
      (e: unknown) => current && setError(errorText(e)),
    );
    return () => {
      current = false;
    };
  }, [messageId, perPage, after]);
  const first = cursors.length === 1;
  const s = ledger?.summary;
  return (
    <section aria-labelledby="ledger-title" data-testid="ledger">
      <h3 id="ledger-title">Delivery ledger</h3>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {ledger && s && (
        <>
          <p data-testid="ledger-summary" class="summary">
            {s.recipients} recipient(s): {s.inView} in view · {s.woken} woken · {s.seen} seen · {s.read} read · {s.replied}{' '}
            replied
            {ledger.accepted.position ? ` · accepted at #${ledger.accepted.position}` : ''}
            {ledger.wakeExpected ? '' : ` · no wake expected${ledger.noWakeReason ? ` (${NO_WAKE[ledger.noWakeReason]})` : ''}`}
            {ledger.escalatedAt && (
              <>
                {' · escalated '}
                <Instant iso={ledger.escalatedAt} /> (woke nobody in time)
              </>
            )}
            {ledger.replyDueBy && (
              <>
                {' · reply due '}
                <Instant iso={ledger.replyDueBy} />
              </>
            )}
            {ledger.replyOverdueAt && (
              <>
                {' · found overdue by the heartbeat '}
                <Instant iso={ledger.replyOverdueAt} />
              </>
            )}
            {ledger.viewsLagging ? ' · the views have not applied it yet' : ''}
          </p>
          <table data-testid="ledger-rows">
            <thead>
              <tr>
                <th scope="col">Recipient</th>
                <th scope="col">Accepted</th>
                {STAGES.map(([stage, label]) => (
                  <th scope="col" key={stage}>
                    {label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {ledger.recipients.map((row) => (
                <tr key={row.recipient}>
                  <td>{row.recipient}</td>
                  <td>{ledger.accepted.position ? `#${ledger.accepted.position}` : 'yes'}</td>
                  {STAGES.map(([stage]) => (
                    <td key={stage}>{stageCell(row, stage)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <div class="pager">
            <button type="button" disabled={first} onClick={() => setCursors(cursors.slice(0, -1))}>
              Previous recipients
            </button>
            <span data-testid="ledger-page">
              page {cursors.length}
              {ledger.nextAfter ? '' : ' (last)'}
            </span>
            <button
              type="button"
              disabled={!ledger.nextAfter}
              onClick={() => ledger.nextAfter && setCursors([...cursors, ledger.nextAfter])}
            >
              Next recipients
            </button>
            <label>
              Per page{' '}
              <select value={perPage} onChange={(e) => setPerPage(Number((e.target as HTMLSelectElement).value))}>
                {[2, 25, 100, 1000].map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
          </div>
        </>
      )}
    </section>
  );
}
