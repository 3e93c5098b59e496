/** A progress bar on stderr for long runs, only on a terminal (never in pipes, files or CI logs). */
import { SingleBar, Presets } from 'cli-progress';

export interface Progress {
  update(position: bigint): void;
  stop(): void;
}

const NO_PROGRESS: Progress = { update: () => {}, stop: () => {} };

/**
 * `total` is the log head; positions are shown as a fraction of it (on EventStoreDB they are byte offsets). `unit`:
 * what value and total count, when not log positions (`agents 8/20`).
 */
export function progressBar(
  stream: NodeJS.WriteStream,
  enabled: boolean,
  label: string,
  total: bigint | null | undefined,
  unit = 'position',
): Progress {
  if (!enabled || !stream.isTTY || total === undefined || total === null || total <= 0n) return NO_PROGRESS;
  const bar = new SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | ${unit} {value}/{total} | {eta_formatted} left`,
      hideCursor: true,
      etaBuffer: 50,
      fps: 5,
    },
    Presets.shades_classic,
  );
  bar.start(Number(total), 0);
  return {
    update: (position) => bar.update(Math.min(Number(position), Number(total))),
    stop: () => bar.stop(),
  };
}
