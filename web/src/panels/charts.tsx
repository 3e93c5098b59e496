/** Charts of the last hour (sampled by the server every 10 s): sends/s, projection lag, unread mail. uPlot draws them. */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api } from '../api';
import { when } from '../format';
import { instantText } from '../instant';
import type { SeriesSample } from '../types';
import { usePolling } from '../usePolling';
import { LoadProblem } from './loadProblem';

type Key = 'sendsPerSecond' | 'lag' | 'unread';

/** A sample's time (Unix seconds) as the server would write it. */
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/**
 * Times as the rest of the console says them (uPlot's own are "9:15pm 12/3/26" and "12/3/26 9:15:20pm"): the axis
 * the local 24-hour clock time, the legend the sample's time with how long ago.
 */
const timeAxis: uPlot.Axis = { values: (_u, splits) => splits.map((seconds) => when(iso(seconds))) };
const timeSeries: uPlot.Series = {
  value: (_u, seconds) => (seconds == null ? '–' : instantText(iso(seconds), 'both', Date.now())),
};

function Chart({ title, samples, pick, color }: { title: string; samples: SeriesSample[]; pick: Key; color: string }) {
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [samples.map((s) => s.t), samples.map((s) => s[pick])];
  useEffect(() => {
    if (!target.current) return;
    plot.current = new uPlot(
      {
        title,
        width: Math.max(320, target.current.clientWidth || 600),
        height: 180,
        // Always the whole last hour, however few samples there are yet (a fresh server has one).
        scales: {
          x: { time: true, range: () => [Date.now() / 1000 - 3600, Date.now() / 1000] },
          y: { range: (_u, min, max) => [0, Math.max(1, (max ?? 0) * 1.1)] },
        },
        series: [timeSeries, { label: title, stroke: color, width: 2, spanGaps: false, points: { show: true, size: 4 } }],
        axes: [timeAxis, { size: 60 }],
      },
      data,
      target.current,
    );
    return () => plot.current?.destroy();
  }, []);
  useEffect(() => plot.current?.setData(data), [samples]);
  return <figure class="chart" ref={target} aria-label={`${title}, last hour`} />;
}

export function ChartsPanel() {
  const series = usePolling(() => api<{ everySeconds: number; samples: SeriesSample[] }>('GET', '/v1/audit/series'), 10_000);
  const samples = series.data?.samples ?? [];
  return (
    <section aria-labelledby="charts-title">
      <h2 id="charts-title">Charts (last hour)</h2>
      <LoadProblem what="the charts' samples" polled={series} />
      {series.data && (
        <p class="status">
          {samples.length} samples, one every {series.data.everySeconds} s since this server started (kept for an hour)
          {series.current ? '' : ', not current'}.
        </p>
      )}
      <div data-testid="charts" class={series.current ? undefined : 'stale'}>
        <Chart title="Sends per second (this node)" samples={samples} pick="sendsPerSecond" color="#1f5fa8" />
        <Chart title="Projection lag (events)" samples={samples} pick="lag" color="#a8361f" />
        <Chart title="Unread messages (all agents)" samples={samples} pick="unread" color="#2d7a2d" />
      </div>
    </section>
  );
}
