/**
 * Given/when/then specifications for the read model's rules (in the style of
 * deciderSpec.ts): given(the log so far) .when(more events) .then(the changes
 * evolve decides, the delivery ledger's aside), .thenLedger(the ledger's alone), .thenNothing(), .thenWakes(the wakes due) or .thenViews(a
 * check of the views after). The given events are folded through the same
 * rules into scratch views; every outcome is computed twice on separately
 * folded views, so a rule that keeps state of its own or touches the view it
 * reads fails the spec.
 */
import { evolve } from '../../src/projections/readModel/evolve';
import { replay, type ReadModelChange } from '../../src/projections/readModel/changes';
import { ScratchViews } from '../../src/projections/readModel/scratchViews';
import { wakeFor } from '../../src/projections/readModel/wakes';
import { taskWakesFor } from '../../src/projections/readModel/taskWakes';
import type { ProjectedEvent, WakeEvent } from '../../src/projections/viewChanges';

interface Outcome {
  changes: ReadModelChange[];
  wakes: WakeEvent[];
  views: ScratchViews;
}

function run(given: readonly ProjectedEvent[], when: readonly ProjectedEvent[]): Outcome {
  const views = new ScratchViews();
  views.applyBatch(structuredClone(given));
  const changes: ReadModelChange[] = [];
  const wakes: WakeEvent[] = [];
  for (const event of structuredClone(when)) {
    for (const fact of event.changes) {
      const decided = evolve(readOnly(views), fact, event.position);
      for (const change of decided) replay(change, views);
      const wake = wakeFor(fact, event.position, views);
      if (wake) wakes.push(wake);
      if (fact.kind === 'taskChanged') wakes.push(...taskWakesFor(fact, event.position, views));
      changes.push(...decided);
    }
  }
  return { changes, wakes, views };
}

const WRITES = new Set([
  'applyBatch',
  'agentRegistered',
  'agentRetired',
  'messageRecorded',
  'identityHasViews',
  'outboxEntryAdded',
  'inboxEntryAdded',
  'unreadMoved',
  'entryRead',
  'entryArchived',
  'entryUnarchived',
  'entrySeen',
  'unseenMoved',
  'lastActivityMoved',
  'taskUpserted',
  'taskListed',
  'taskUnlisted',
  'tasksWaitingMoved',
  'ledgerOpened',
  'ledgerStageReached',
  'replyAwaited',
  'repliesSettled',
  'wakeNotDue',
  'recipientAttended',
  'unwokenListed',
  'unwokenCleared',
  'wakeEscalated',
  'replyRequested',
  'replyOwed',
  'replyOwedCleared',
  'repliesMet',
  'replyOverdueMarked',
  'nudgeObserved',
]);

/** The view as the rules see it: reading only (a write through it throws). */
function readOnly(views: ScratchViews): ScratchViews {
  return new Proxy(views, {
    get(target, name) {
      if (typeof name === 'string' && WRITES.has(name)) throw new Error(`a rule tried to write the views it reads (${name})`);
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function twice(given: readonly ProjectedEvent[], when: readonly ProjectedEvent[]): Outcome {
  const first = run(given, when);
  const second = run(given, when);
  expect(second.changes).toEqual(first.changes);
  expect(second.wakes).toEqual(first.wakes);
  return first;
}

const LEDGER_CHANGES = new Set([
  'ledgerOpened',
  'ledgerStageReached',
  'replyAwaited',
  'repliesSettled',
  'wakeNotDue',
  'recipientAttended',
  'unwokenListed',
  'unwokenCleared',
  'wakeEscalated',
  'replyRequested',
  'replyOwed',
  'replyOwedCleared',
  'repliesMet',
  'replyOverdueMarked',
  'nudgeObserved',
]);
const isLedgerChange = (change: ReadModelChange): boolean => LEDGER_CHANGES.has(change.kind);

export const ReadModelSpec = {
  given(given: readonly ProjectedEvent[]) {
    return {
      when(...when: ProjectedEvent[]) {
        return {
          /** The changes to every view but the delivery ledger (its own specs use thenLedger). */
          then(expected: ReadModelChange[]): void {
            expect(twice(given, when).changes.filter((change) => !isLedgerChange(change))).toEqual(expected);
          },
          /** The delivery ledger's changes (ledgerRules.ts), alone. */
          thenLedger(expected: ReadModelChange[]): void {
            expect(twice(given, when).changes.filter(isLedgerChange)).toEqual(expected);
          },
          thenNothing(): void {
            expect(twice(given, when).changes).toEqual([]);
          },
          thenWakes(expected: WakeEvent[]): void {
            expect(twice(given, when).wakes).toEqual(expected);
          },
          thenViews(check: (views: ScratchViews) => void): void {
            check(twice(given, when).views);
          },
        };
      },
    };
  },
};
