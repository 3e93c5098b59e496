/** The rejection log port's contract: every adapter keeps the newest `capacity` rejections, newest first. */
import type { RejectionLog, RejectionRecord } from '../../src/application/rejectionLog';

export const rejection = (n: number, agent = '@a'): RejectionRecord => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  agent,
  role: 'agent',
  command: 'send',
  surface: 'http',
  code: 'INVALID_RECIPIENT_SHAPE',
  status: 400,
  message: `rejection ${n}`,
  to: 'AGENT:gpt',
  suggestions: ['@neo-gpt'],
});

export function describeRejectionLogContract(name: string, open: (capacity: number) => Promise<RejectionLog>): void {
  describe(`rejection log contract: ${name}`, () => {
    let log: RejectionLog;
    afterEach(() => log.close());

    test('an empty log answers no rejections', async () => {
      log = await open(5);
      await expect(log.recent(10)).resolves.toEqual([]);
    });

    test('rejections come back newest first, whole, and at most `limit` of them', async () => {
      log = await open(5);
      for (const n of [1, 2, 3]) log.record(rejection(n, `@agent-${n}`));
      await expect(log.recent(10)).resolves.toEqual([
        rejection(3, '@agent-3'),
        rejection(2, '@agent-2'),
        rejection(1, '@agent-1'),
      ]);
      await expect(log.recent(2)).resolves.toEqual([rejection(3, '@agent-3'), rejection(2, '@agent-2')]);
    });

    test('past its capacity the log keeps the newest and drops the oldest', async () => {
      log = await open(5);
      for (let n = 1; n <= 12; n++) log.record(rejection(n));
      const recent = await log.recent(100);
      expect(recent.map((r) => r.message)).toEqual([12, 11, 10, 9, 8].map((n) => `rejection ${n}`));
      expect(log.capacity).toBe(5);
    });
  });
}
