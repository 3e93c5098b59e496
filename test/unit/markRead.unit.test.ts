/** MarkRead: per recipient, idempotent, only for recipients. */
import { foldMessage, initialMessageState } from '../../src/commands/message';
import { decideMarkRead, type MarkRead } from '../../src/commands/receipts';
import type { Actor } from '../../src/commands/roles';
import type { MessageEvent } from '../../src/events/types';
import { DeciderSpecification } from '../support/deciderSpec';
import { A, B, broadcastSent, C, D, directSent, meta, PARENT_ID, readBy, T0, T2 } from './fixtures/domain';

const given = DeciderSpecification.for<MarkRead, ReturnType<typeof initialMessageState>, MessageEvent>({
  initialState: initialMessageState,
  evolve: foldMessage,
  decide: decideMarkRead,
});
const markRead = (reader: Actor, messageId = PARENT_ID): MarkRead => ({
  type: 'MarkRead',
  data: { messageId },
  metadata: meta(reader, T2),
});

describe('MarkRead', () => {
  it('the recipient of a direct message records a receipt at the command time', () => {
    given([directSent('@alice', '@bob', { priority: 'high' })])
      .when(markRead(B))
      .then([{ type: 'ReceiptRead', data: { messageId: PARENT_ID, reader: '@bob', readAt: T2, priority: 'high', sentAt: T0 } }]);
  });

  it('a second MarkRead records nothing: the first readAt stands', () => {
    given([directSent('@alice', '@bob'), readBy('@bob')])
      .when(markRead(B))
      .thenNothing();
  });

  it('the sender is not a recipient: NOT_A_RECIPIENT', () => {
    given([directSent('@alice', '@bob')])
      .when(markRead(A))
      .thenFails('NOT_A_RECIPIENT', { messageId: PARENT_ID });
  });

  it('a third party is answered as if the message did not exist: MESSAGE_NOT_FOUND (no existence oracle)', () => {
    given([directSent('@alice', '@bob')])
      .when(markRead(C))
      .thenFails('MESSAGE_NOT_FOUND', { messageId: PARENT_ID });
  });

  it('a message that does not exist: MESSAGE_NOT_FOUND', () => {
    given([]).when(markRead(B)).thenFails('MESSAGE_NOT_FOUND', { messageId: PARENT_ID });
  });

  it('an unknown event in the message stream is a loud error, never skipped', () => {
    const bogus = { type: 'MessageEdited', data: { messageId: PARENT_ID }, position: 9n } as unknown as MessageEvent;
    given([directSent('@alice', '@bob'), bogus])
      .when(markRead(B))
      .thenThrows((error) => expect((error as Error).message).toMatch(/Unexpected message event type MessageEdited/));
  });

  describe('on a broadcast', () => {
    const broadcast = broadcastSent('@alice', ['@bob', '@carol']);

    it('B having read it does not mark it read for C', () => {
      given([...broadcast, readBy('@bob')])
        .when(markRead(C))
        .then([
          { type: 'ReceiptRead', data: { messageId: PARENT_ID, reader: '@carol', readAt: T2, priority: 'normal', sentAt: T0 } },
        ]);
    });

    it('B reading twice still records one receipt', () => {
      given([...broadcast, readBy('@bob'), readBy('@carol')])
        .when(markRead(B))
        .thenNothing();
    });

    it('an agent outside the audience snapshot (e.g. registered later) is not party to it: MESSAGE_NOT_FOUND', () => {
      given(broadcast).when(markRead(D)).thenFails('MESSAGE_NOT_FOUND');
    });

    it('the broadcaster is not a recipient of its own broadcast', () => {
      given(broadcast).when(markRead(A)).thenFails('NOT_A_RECIPIENT');
    });
  });
});
