/**
 * The live flow's stream (GET /v1/audit/stream) feeding a FlowBuffer, flushed
 * into view at most every FLUSH_MS: at 1,000 events/s that is ~250 events per
 * render, not one render each (nor one per animation frame, 60 a second).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { FlowBuffer, type Batched } from './flowBuffer';
import { openEventStream } from './sse';
import type { FlowEntry } from './types';

export interface FlowQuery {
  agent?: string;
  threadId?: string;
  type?: string;
}

export interface LiveFlow {
  view: Batched<FlowEntry>;
  status: string;
  /** True while this query's stream is open and live (not connecting, retrying or stopped). */
  live: boolean;
  /**
   * The log position this query's stream started after (its first `ready`; null: the log was empty) while no entry
   * has come yet, else undefined (before the stream said, or once an entry came): the flow shows what is written
   * after it, nothing before.
   */
  openedAfter: string | null | undefined;
  paused: boolean;
  /** While paused: what came since (counted, held, not shown until Resume); null when not paused. */
  held: { received: number; dropped: number; pending: number } | null;
  setPaused(paused: boolean): void;
  clear(): void;
}

/** Rows kept in view: enough to read back a burst, few enough that the tab stays small at 1,000 events/s. */
export const FLOW_ROWS = 500;
/** A person reads a fast flow no quicker than this; rendering more often only costs the tab. */
const FLUSH_MS = 250;

export function useLiveFlow(query: FlowQuery): LiveFlow {
  const buffer = useRef(new FlowBuffer<FlowEntry>(FLOW_ROWS));
  const [view, setView] = useState<Batched<FlowEntry>>(buffer.current.flush());
  // The status belongs to one query's stream: a new filter reads "connecting" from its first render on, never the
  // old stream's "live" (effects run after paint, so the new stream opens a moment later).
  const key = JSON.stringify([query.agent, query.threadId, query.type]);
  const [status, setStatus] = useState({ key, text: 'connecting' });
  const [paused, setPaused] = useState(false);
  const [held, setHeld] = useState<LiveFlow['held']>(null);
  const [opened, setOpened] = useState<{ key: string; after: string | null | undefined } | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  useEffect(() => {
    setView(buffer.current.clear());
    if (pausedRef.current) setHeld(buffer.current.counts());
    let timer: ReturnType<typeof setTimeout> | null = null;
    // Paused, the view stands still but what comes is still counted: the status said "1 received" for ever, and
    // nothing of the entries waiting.
    const schedule = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        if (pausedRef.current) setHeld(buffer.current.counts());
        else setView(buffer.current.flush());
      }, FLUSH_MS);
    };
    const params = (after: string | null) => {
      const search = new URLSearchParams();
      if (after) search.set('after', after);
      for (const [key, value] of Object.entries(query)) if (value) search.set(key, value);
      const text = search.toString();
      return `/v1/audit/stream${text ? `?${text}` : ''}`;
    };
    let seen = false;
    const close = openEventStream(params, {
      onEvent: (event, data) => {
        // A reconnect's `ready` resumes after the last entry seen: the first one says where this flow began.
        if (event === 'ready')
          setOpened((was) => (was?.key === key ? was : { key, after: (data as { after: string | null }).after }));
        if (event !== 'entry') return;
        // Once an entry came, "nothing written since it opened" is over for this query (a Clear does not bring it back).
        if (!seen) {
          seen = true;
          setOpened({ key, after: undefined });
        }
        buffer.current.push(data as FlowEntry);
        schedule();
      },
      onStatus: (next, detail) => setStatus({ key, text: detail ? `${next} (${detail})` : next }),
    });
    return () => {
      close();
      if (timer) clearTimeout(timer);
    };
  }, [query.agent, query.threadId, query.type]);

  useEffect(() => {
    if (paused) setHeld(buffer.current.counts());
    else {
      setHeld(null);
      setView(buffer.current.flush());
    }
  }, [paused]);

  return {
    view,
    status: status.key === key ? status.text : 'connecting',
    live: status.key === key && status.text === 'live',
    openedAfter: opened?.key === key ? opened.after : undefined,
    paused,
    held: paused ? held : null,
    setPaused,
    clear: () => {
      setView(buffer.current.clear());
      if (pausedRef.current) setHeld(buffer.current.counts());
    },
  };
}
