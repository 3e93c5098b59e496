/** Whose views are these: the verdict and the one-line refusal (pure). */
import { describeForeignViews, judgeViews } from '../../src/projections/viewsOwnership';
import type { ViewsBinding } from '../../src/projections/projectionStore';

const binding = (logIdentity: string | null, checkpoint: bigint | null): ViewsBinding => ({
  location: "Redis namespace 'team'",
  logIdentity,
  checkpoint,
  generation: 'team:v1:',
  liveWriter: null,
});

describe('judgeViews', () => {
  it('views of this log at or below its head are its own', () => {
    expect(judgeViews('log-a', 10n, binding('log-a', 10n))).toEqual({ kind: 'own' });
    expect(judgeViews('log-a', 10n, binding('log-a', null))).toEqual({ kind: 'own' });
  });

  it('views with neither log nor checkpoint are free to claim', () => {
    expect(judgeViews('log-a', null, binding(null, null))).toEqual({ kind: 'unclaimed' });
  });

  it("another log's views, and views of no recorded log, are foreign", () => {
    expect(judgeViews('log-a', 10n, binding('log-b', 3n))).toEqual({ kind: 'foreign', owner: 'log-b' });
    expect(judgeViews('log-a', 10n, binding(null, 3n))).toEqual({ kind: 'foreign', owner: null });
  });

  it('a checkpoint ahead of the head (or of an empty log) is never trusted', () => {
    expect(judgeViews('log-a', 5n, binding('log-a', 29n))).toEqual({ kind: 'ahead', checkpoint: 29n, head: 5n });
    expect(judgeViews('log-a', null, binding('log-a', 1n))).toEqual({ kind: 'ahead', checkpoint: 1n, head: null });
  });
});

describe('describeForeignViews', () => {
  it('is one line naming the views, both logs and the two remedies', () => {
    for (const [views, verdict] of [
      [binding('log-b', 3n), { kind: 'foreign', owner: 'log-b' }],
      [binding('log-a', 29n), { kind: 'ahead', checkpoint: 29n, head: 5n }],
    ] as const) {
      const line = describeForeignViews(views, 'log-a', verdict);
      expect(line).not.toContain('\n');
      expect(line).toContain("Redis namespace 'team'");
      expect(line).toContain('log-a');
      expect(line).toContain('MAILBOX_REDIS_NAMESPACE');
      expect(line).toContain('mailbox projections rebuild --take-over');
      expect(line).toContain('MAILBOX_PROJECTIONS_ON_FOREIGN=take-over');
    }
    expect(describeForeignViews(binding('log-b', 3n), 'log-a', { kind: 'foreign', owner: 'log-b' })).toContain(
      'another event log (log-b)',
    );
  });
});
