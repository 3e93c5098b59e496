/** The delivery ledger's rules: per recipient, each stage once, only for recipients; replies answer the thread. */
import type { ScratchViews } from '../../../src/projections/readModel/scratchViews';
import { ReadModelSpec } from '../../support/readModelSpec';
import { LogBuilder, next, nextPosition } from './scenario';

const page = { after: null, limit: 50 };

/** The ledger @a's new thread opens, expecting a wake. */
const opened = (messageId: string, sentAt: string, recipients: string[], position: bigint) => ({
  kind: 'ledgerOpened' as const,
  header: { messageId, sender: '@a', threadId: messageId, sentAt, recipients, wakeExpected: true, position: position.toString() },
});

describe('read model: the delivery ledger', () => {
  it('a direct message opens its ledger, its recipient owes the thread a reply, and the inbox entry puts it in view', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const given = log.projected();
    const position = nextPosition(log);
    const when = next(log, (l) => l.send('@a', '@b'));
    const sentAt = log.sentAt('m1');
    ReadModelSpec.given(given)
      .when(...when)
      .thenLedger([
        opened('m1', sentAt, ['@b'], position),
        { kind: 'unwokenListed', messageId: 'm1', sentAt },
        { kind: 'replyAwaited', threadId: 'm1', recipient: '@b', messageId: 'm1' },
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@b', stage: 'inView', mark: position.toString() },
      ]);
  });

  it('woken and read are marked once each, for the recipient only; a stranger or an unknown message changes nothing', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', '@b');
    const given = log.projected();
    const wokenAt = log.nextAt;
    const woken = next(log, (l) => l.wake('@b', 'm1', 'webhook'));
    ReadModelSpec.given(given)
      .when(...woken)
      .thenLedger([
        { kind: 'nudgeObserved', identity: '@b', mark: `${wokenAt} webhook` },
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@b', stage: 'woken', mark: `${wokenAt} webhook` },
        { kind: 'unwokenCleared', messageId: 'm1' },
      ]);
    const again = next(log, (l) => l.wake('@b', 'm1', 'stream'));
    ReadModelSpec.given([...given, ...woken])
      .when(...again)
      .thenNothing();
    const strangers = next(log, (l) => {
      l.wake('@c', 'm1');
      l.read('@c', 'm1');
      l.wake('@b', 'no-such-message');
    });
    ReadModelSpec.given(given)
      .when(...strangers)
      .thenLedger([]);
    const readAt = log.nextAt;
    const read = next(log, (l) => l.read('@b', 'm1'));
    ReadModelSpec.given(given)
      .when(...read)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@b', stage: 'read', mark: readAt },
        // Its sole recipient read it: it needs no wake, so the message is no longer unwoken.
        { kind: 'recipientAttended', messageId: 'm1' },
        { kind: 'unwokenCleared', messageId: 'm1' },
      ]);
  });

  it('a message is unwoken until every recipient saw or read it (each counted at its first of the two), or a wake', () => {
    const log = new LogBuilder().register('@a', '@b', '@c', '@d');
    log.send('@a', ['@b', '@c', '@d']);
    const given = log.projected();
    const readAt = log.nextAt;
    const first = next(log, (l) => l.read('@b', 'm1'));
    ReadModelSpec.given(given)
      .when(...first)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@b', stage: 'read', mark: readAt },
        { kind: 'recipientAttended', messageId: 'm1' },
      ]);
    const seenAt = log.nextAt;
    const more = next(log, (l) => {
      l.seen('@b', 'm1'); // read already: counted once
      l.seen('@c', 'm1');
    });
    ReadModelSpec.given([...given, ...first])
      .when(...more)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@b', stage: 'seen', mark: seenAt },
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@c', stage: 'seen', mark: expect.any(String) },
        { kind: 'recipientAttended', messageId: 'm1' },
      ]);
    const cRead = next(log, (l) => l.read('@c', 'm1')); // seen already: counted once
    ReadModelSpec.given([...given, ...first, ...more])
      .when(...cRead)
      .thenLedger([{ kind: 'ledgerStageReached', messageId: 'm1', recipient: '@c', stage: 'read', mark: expect.any(String) }]);
    const last = next(log, (l) => l.seen('@d', 'm1'));
    ReadModelSpec.given([...given, ...first, ...more, ...cRead])
      .when(...last)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@d', stage: 'seen', mark: expect.any(String) },
        { kind: 'recipientAttended', messageId: 'm1' },
        { kind: 'unwokenCleared', messageId: 'm1' },
      ]);
    ReadModelSpec.given([...given, ...first, ...more, ...cRead])
      .when(...last)
      .thenViews((views) =>
        expect(views.ledger.unwoken({ sentBefore: '9999-12-31T23:59:59.999Z', limit: 10, pendingOnly: false })).toEqual({
          count: 0,
          messages: [],
        }),
      );
  });

  it("a delivered nudge is the recipient's last nudge, even after the message's first wake; a wake stream's is not", () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    log.send('@a', 'AGENT:*', {}, ['@b', '@c']);
    log.wake('@b', 'm1', 'stream');
    const given = log.projected();
    const hookAt = log.nextAt;
    const hook = next(log, (l) => l.wake('@b', 'm1', 'hook'));
    ReadModelSpec.given(given)
      .when(...hook)
      .thenLedger([{ kind: 'nudgeObserved', identity: '@b', mark: `${hookAt} hook` }]);
    const redisAt = log.nextAt;
    const later = next(log, (l) => l.wake('@b', 'no-such-message', 'redis'));
    ReadModelSpec.given([...given, ...hook])
      .when(...later)
      .thenLedger([{ kind: 'nudgeObserved', identity: '@b', mark: `${redisAt} redis` }]);
    const streamAt = log.nextAt;
    const stream = next(log, (l) => l.wake('@c', 'm1', 'stream'));
    ReadModelSpec.given([...given, ...hook, ...later])
      .when(...stream)
      .thenLedger([{ kind: 'ledgerStageReached', messageId: 'm1', recipient: '@c', stage: 'woken', mark: `${streamAt} stream` }]);
  });

  it("a nudge about tasks alone, under its task's message: the holder's is its wake too, the sender's (asked) its last nudge only", () => {
    const log = new LogBuilder().register('@a', '@b');
    log.send('@a', '@b', { task: {} });
    const given = log.projected();
    const heldAt = log.nextAt;
    const holder = next(log, (l) => l.wake('@b', 'm1', 'webhook')); // @b holds the task the message carried
    ReadModelSpec.given(given)
      .when(...holder)
      .thenLedger([
        { kind: 'nudgeObserved', identity: '@b', mark: `${heldAt} webhook` },
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@b', stage: 'woken', mark: `${heldAt} webhook` },
        { kind: 'unwokenCleared', messageId: 'm1' },
      ]);
    const askedAt = log.nextAt;
    const sender = next(log, (l) => l.wake('@a', 'm1', 'hook')); // the task asks @a, its sender, for input
    ReadModelSpec.given([...given, ...holder])
      .when(...sender)
      .thenLedger([{ kind: 'nudgeObserved', identity: '@a', mark: `${askedAt} hook` }]);
  });

  it("a send in the thread answers every message there awaiting its sender's reply, once; the others still wait", () => {
    const log = new LogBuilder().register('@a', '@b', '@c', '@d');
    const m1 = log.send('@a', 'AGENT:*', {}, ['@b', '@c', '@d']);
    const given = log.projected();
    const position = nextPosition(log);
    const when = next(log, (l) => l.send('@b', '@a', { replyTo: m1 }));
    const replyAt = log.sentAt('m2');
    ReadModelSpec.given(given)
      .when(...when)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: m1, recipient: '@b', stage: 'replied', mark: `${replyAt} m2` },
        { kind: 'repliesSettled', threadId: m1, recipient: '@b' },
        {
          kind: 'ledgerOpened',
          header: {
            messageId: 'm2',
            sender: '@b',
            threadId: m1,
            sentAt: replyAt,
            recipients: ['@a'],
            wakeExpected: true,
            position: position.toString(),
          },
        },
        { kind: 'unwokenListed', messageId: 'm2', sentAt: replyAt },
        { kind: 'replyAwaited', threadId: m1, recipient: '@a', messageId: 'm2' },
        { kind: 'ledgerStageReached', messageId: 'm2', recipient: '@a', stage: 'inView', mark: position.toString() },
      ]);
    const later = next(log, (l) => l.send('@b', '@a', { replyTo: m1 }));
    ReadModelSpec.given([...given, ...when])
      .when(...later)
      .thenViews((views) => {
        const ledger = views.deliveryLedger(m1, page)!;
        expect(ledger.counts).toEqual({ inView: 3, woken: 0, seen: 0, read: 0, replied: 1 });
        expect(ledger.rows.map((row) => [row.recipient, row.replied?.messageId ?? null])).toEqual([
          ['@b', 'm2'], // the first reply, not the later one
          ['@c', null],
          ['@d', null],
        ]);
      });
  });

  it('a suppressed send expects no wake; a broadcast whose only recipient is its sender expects none either', () => {
    const log = new LogBuilder().register('@a', '@b');
    log.send('@a', '@b', { wakeSuppressed: true });
    log.send('@a', 'AGENT:*', {}, ['@a']);
    log.send('@a', 'AGENT:*', {}, ['@a', '@b']);
    ReadModelSpec.given([])
      .when(...log.projected())
      .thenViews((views) => {
        expect(['m1', 'm2', 'm3'].map((id) => views.deliveryLedger(id, page)!.message.wakeExpected)).toEqual([
          false,
          false,
          true,
        ]);
      });
  });

  it('a wake is due only to a registered agent, not retired, at the send: mail no agent can be woken for is never unwoken', () => {
    const log = new LogBuilder().register('@a', '@b', '@c', '@d');
    log.retire('@d');
    const ghost = log.send('@a', '@ghost'); // never registered
    const retired = log.send('@a', '@d'); // retired before the send
    const late = log.send('@a', '@late'); // registered after it
    const mixed = log.send('@a', ['@ghost', '@c']); // one registered recipient: due
    const noPeer = log.send('@a', 'AGENT:*', {}, ['@a']); // a broadcast with no other registered agent
    const broadcast = log.send('@a', 'AGENT:*', {}, ['@a', '@b', '@c']);
    const direct = log.send('@a', '@b');
    const given = log.projected();
    const retiredLater = next(log, (l) => {
      l.register('@late');
      l.retire('@b');
    });
    ReadModelSpec.given(given)
      .when(...retiredLater)
      .thenViews((views) => {
        const expected = (id: string) => views.deliveryLedger(id, page)!.message.wakeExpected;
        expect([ghost, retired, late, mixed, noPeer, broadcast, direct].map(expected)).toEqual([
          false,
          false,
          false, // decided at the send: registering later does not make it due a wake
          true,
          false,
          true,
          true, // @b retired after the send: it was due a wake and is still unwoken
        ]);
        const { messages } = views.ledger.unwoken({ sentBefore: '2100-01-01T00:00:00.000Z', limit: 10, pendingOnly: false });
        expect(messages.map((m) => m.messageId)).toEqual([mixed, broadcast, direct]);
      });
  });

  it('only the recipients due a wake clear an unwoken message by seeing or reading it; the others are marked at the send', () => {
    const log = new LogBuilder().register('@a', '@b', '@c', '@d');
    log.retire('@d');
    const registry = log.projected();
    const position = nextPosition(log);
    const when = next(log, (l) => l.send('@a', ['@c', '@ghost2']));
    const sentAt = log.sentAt('m1');
    // Given @c registered and @ghost2 never: when @a writes to both, @ghost2 is marked due no wake.
    ReadModelSpec.given(registry)
      .when(...when)
      .thenLedger([
        opened('m1', sentAt, ['@c', '@ghost2'], position),
        { kind: 'wakeNotDue', messageId: 'm1', recipient: '@ghost2' },
        { kind: 'unwokenListed', messageId: 'm1', sentAt },
        { kind: 'replyAwaited', threadId: 'm1', recipient: '@c', messageId: 'm1' },
        { kind: 'replyAwaited', threadId: 'm1', recipient: '@ghost2', messageId: 'm1' },
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@c', stage: 'inView', mark: position.toString() },
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@ghost2', stage: 'inView', mark: position.toString() },
      ]);
    const broadcast = log.send('@a', 'AGENT:*', {}, ['@a', '@b', '@d']); // its sender and the retired @d are due none
    const given = log.projected();
    const unwoken = (views: ScratchViews) =>
      views.ledger
        .unwoken({ sentBefore: '2100-01-01T00:00:00.000Z', limit: 10, pendingOnly: false })
        .messages.map((m) => m.messageId);
    // When @c reads it (polling, no wake): every recipient due a wake has it, so it is no longer unwoken.
    const cReads = next(log, (l) => l.read('@c', 'm1'));
    ReadModelSpec.given(given)
      .when(...cReads)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@c', stage: 'read', mark: expect.any(String) },
        { kind: 'recipientAttended', messageId: 'm1' },
        { kind: 'unwokenCleared', messageId: 'm1' },
      ]);
    // When @ghost2 registers later and reads it, @c not: @ghost2 does not stand in for @c, it stays unwoken.
    const ghostReads = next(log, (l) => {
      l.register('@ghost2');
      l.read('@ghost2', 'm1');
      l.seen('@a', broadcast); // the broadcast's sender, due no wake
      l.seen('@d', broadcast); // retired before it was sent
    });
    ReadModelSpec.given(given)
      .when(...ghostReads)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: 'm1', recipient: '@ghost2', stage: 'read', mark: expect.any(String) },
        { kind: 'ledgerStageReached', messageId: broadcast, recipient: '@a', stage: 'seen', mark: expect.any(String) },
        { kind: 'ledgerStageReached', messageId: broadcast, recipient: '@d', stage: 'seen', mark: expect.any(String) },
      ]);
    ReadModelSpec.given(given)
      .when(...ghostReads)
      .thenViews((views) => expect(unwoken(views)).toEqual(['m1', broadcast]));
    // When @b, the broadcast's one recipient due a wake, sees it: no longer unwoken.
    const bSees = next(log, (l) => l.seen('@b', broadcast));
    ReadModelSpec.given([...given, ...ghostReads])
      .when(...bSees)
      .thenViews((views) => expect(unwoken(views)).toEqual(['m1']));
  });

  it('pages list the recipients in identity order, with the counts of the whole message', () => {
    const log = new LogBuilder().register('@a', '@b', '@c', '@d');
    const m1 = log.send('@a', 'AGENT:*', {}, ['@d', '@b', '@c']);
    log.read('@c', m1);
    ReadModelSpec.given([])
      .when(...log.projected())
      .thenViews((views) => {
        const first = views.deliveryLedger(m1, { after: null, limit: 2 })!;
        expect(first.rows.map((row) => row.recipient)).toEqual(['@b', '@c']);
        expect(first.rows[1].read).toEqual({ at: expect.any(String) });
        expect(first.nextAfter).toBe('@c');
        expect(first.counts).toEqual({ inView: 3, woken: 0, seen: 0, read: 1, replied: 0 });
        const second = views.deliveryLedger(m1, { after: '@c', limit: 2 })!;
        expect(second.rows.map((row) => row.recipient)).toEqual(['@d']);
        expect(second.nextAfter).toBeNull();
        expect(second.message.recipientCount).toBe(3);
      });
  });

  it('unwoken: listed from its send until its first wake; an escalation is marked once and leaves it unwoken', () => {
    const log = new LogBuilder().register('@a', '@b', '@c');
    const m1 = log.send('@a', 'AGENT:*', {}, ['@b', '@c']);
    log.send('@a', '@c', { wakeSuppressed: true }); // m2 expects no wake
    const given = log.projected();
    const everything = { sentBefore: '2100-01-01T00:00:00.000Z', limit: 10, pendingOnly: false };
    ReadModelSpec.given([])
      .when(...given)
      .thenViews((views) => {
        expect(views.ledger.unwoken(everything).messages.map((m) => m.messageId)).toEqual([m1]);
        expect(views.ledger.unwoken({ ...everything, sentBefore: log.sentAt(m1) }).count).toBe(0); // strictly before
      });
    const escalatedAt = log.nextAt;
    const escalated = next(log, (l) => l.escalate(m1, ['@b', '@c']).escalate(m1, ['@b', '@c']));
    ReadModelSpec.given(given)
      .when(...escalated)
      .thenLedger([{ kind: 'wakeEscalated', messageId: m1, at: escalatedAt }]);
    ReadModelSpec.given(given)
      .when(...escalated)
      .thenViews((views) => {
        expect(views.ledger.unwoken(everything).messages).toEqual([
          { messageId: m1, sender: '@a', sentAt: log.sentAt(m1), recipientCount: 2, escalatedAt },
        ]);
        expect(views.ledger.unwoken({ ...everything, pendingOnly: true }).count).toBe(0);
      });
    const woken = next(log, (l) => l.wake('@c', m1).wake('@b', m1));
    ReadModelSpec.given([...given, ...escalated])
      .when(...woken)
      .thenLedger([
        { kind: 'ledgerStageReached', messageId: m1, recipient: '@c', stage: 'woken', mark: expect.stringMatching(/ stream$/) },
        { kind: 'unwokenCleared', messageId: m1 },
        { kind: 'ledgerStageReached', messageId: m1, recipient: '@b', stage: 'woken', mark: expect.stringMatching(/ stream$/) },
      ]);
  });
});
