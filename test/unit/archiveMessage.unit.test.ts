/** ArchiveMessage: per recipient, idempotent, remembers whether it was still unread (for exact counts). */
import { foldMessage, initialMessageState } from '../../src/commands/message';
import { decideArchiveMessage, type ArchiveMessage } from '../../src/commands/receipts';
import type { Actor } from '../../src/commands/roles';
import type { MessageArchived, MessageEvent } from '../../src/events/types';
import { DeciderSpecification } from '../support/deciderSpec';
import { A, B, broadcastSent, C, directSent, meta, PARENT_ID, readBy, T0, T2 } from './fixtures/domain';

const given = DeciderSpecification.for<ArchiveMessage, ReturnType<typeof initialMessageState>, MessageEvent>({
  initialState: initialMessageState,
  evolve: foldMessage,
  decide: decideArchiveMessage,
});
const archive = (actor: Actor): ArchiveMessage => ({
  type: 'ArchiveMessage',
  data: { messageId: PARENT_ID },
  metadata: meta(actor, T2),
});
const archived = (recipient: string, wasUnread: boolean): MessageArchived => ({
  type: 'MessageArchived',
  data: {
    messageId: PARENT_ID,
    recipient,
    archivedAt: T2,
    wasUnread,
    priority: 'normal',
    sentAt: T0,
  },
});

describe('ArchiveMessage', () => {
  it('archiving an unread message records that it was unread', () => {
    given([directSent('@alice', '@bob')])
      .when(archive(B))
      .then([archived('@bob', true)]);
  });

  it('archiving a read message records that it was read', () => {
    given([directSent('@alice', '@bob'), readBy('@bob')])
      .when(archive(B))
      .then([archived('@bob', false)]);
  });

  it('archiving twice records nothing', () => {
    given([directSent('@alice', '@bob'), archived('@bob', true)])
      .when(archive(B))
      .thenNothing();
  });

  it('only a recipient can archive: NOT_A_RECIPIENT for the sender, MESSAGE_NOT_FOUND for others (no existence oracle)', () => {
    given([directSent('@alice', '@bob')])
      .when(archive(A))
      .thenFails('NOT_A_RECIPIENT');
    given([directSent('@alice', '@bob')])
      .when(archive(C))
      .thenFails('MESSAGE_NOT_FOUND');
  });

  it('a message that does not exist: MESSAGE_NOT_FOUND', () => {
    given([]).when(archive(B)).thenFails('MESSAGE_NOT_FOUND', { messageId: PARENT_ID });
  });

  it('on a broadcast, B archiving leaves C untouched', () => {
    given([...broadcastSent('@alice', ['@bob', '@carol']), archived('@bob', true)])
      .when(archive(C))
      .then([archived('@carol', true)]);
  });
});
