/** The pure stall detector: lag alone is not a stall; an unmoving checkpoint behind the head for stallAfter is. */
import { initialPipelineState, observePipeline, type PipelineState } from '../../src/heartbeat/pipelineWatch';

const INTERVAL = 1000;

function run(samples: Array<[head: bigint | null, checkpoint: bigint | null]>, stallAfterMs = INTERVAL) {
  let state: PipelineState = initialPipelineState;
  return samples.map(([head, checkpoint], i) => {
    const seen = observePipeline(state, { head, checkpoint }, i * INTERVAL, stallAfterMs);
    state = seen.state;
    return { lag: seen.lag, stalled: seen.stalled, stuckForMs: seen.stuckForMs };
  });
}

describe('pipeline watch', () => {
  test('an empty log and a caught-up projector are healthy', () => {
    expect(
      run([
        [null, null],
        [5n, 5n],
        [9n, 9n],
      ]).map((o) => [o.lag, o.stalled]),
    ).toEqual([
      [0n, false],
      [0n, false],
      [0n, false],
    ]);
  });

  test('a projector stopped behind the head raises the alarm on the second sample (within 2 intervals)', () => {
    const observed = run([
      [5n, 5n],
      [8n, 5n],
      [9n, 5n],
    ]);
    expect(observed.map((o) => o.stalled)).toEqual([false, false, true]);
    expect(observed[1].lag).toBe(3n);
    expect(observed[2]).toEqual({ lag: 4n, stalled: true, stuckForMs: INTERVAL });
  });

  test('a slow projector whose checkpoint advances is lagging, not stalled', () => {
    expect(
      run([
        [100n, 10n],
        [120n, 40n],
        [130n, 90n],
        [140n, 120n],
      ]).map((o) => o.stalled),
    ).toEqual([false, false, false, false]);
  });

  test('a stall lasts while the checkpoint stands and ends when the projector catches up', () => {
    const observed = run([
      [8n, 5n],
      [8n, 5n],
      [9n, 5n],
      [9n, 9n],
      [9n, 9n],
    ]);
    expect(observed.map((o) => [o.stalled, o.stuckForMs])).toEqual([
      [false, 0],
      [true, INTERVAL],
      [true, 2 * INTERVAL],
      [false, 0],
      [false, 0],
    ]);
  });

  test('a longer threshold waits longer', () => {
    expect(
      run(
        [
          [8n, 5n],
          [8n, 5n],
          [8n, 5n],
          [8n, 5n],
        ],
        3 * INTERVAL,
      ).map((o) => o.stalled),
    ).toEqual([false, false, false, true]);
  });

  test('views that never started (null checkpoint) behind a non-empty log stall too', () => {
    expect(
      run([
        [3n, null],
        [3n, null],
      ]).map((o) => [o.lag, o.stalled]),
    ).toEqual([
      [3n, false],
      [3n, true],
    ]);
  });
});
