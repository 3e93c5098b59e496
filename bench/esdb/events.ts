/** Realistic mailbox events for the esdb benchmarks: a MessageSent with a body of a few hundred bytes. */
import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/events/types';
import { CURRENT_SCHEMA_VERSION } from '../../src/events/upcasters';

const BODY = 'Please review the diff on the release branch before the deploy window; notes inline. '.repeat(4);

export function messageSent(index: number): NewEvent {
  const messageId = randomUUID();
  const at = new Date(1_750_000_000_000 + index * 1000).toISOString();
  return {
    eventId: randomUUID(),
    type: 'MessageSent',
    data: {
      messageId,
      from: `@agent-${index % 100}`,
      to: `@agent-${(index + 1) % 100}`,
      subject: `Review #${index}`,
      priority: 'normal',
      threadId: messageId,
      inReplyTo: null,
      tags: ['review'],
      sentAt: at,
      wakeSuppressed: false,
      hasTask: false,
      body: BODY,
      task: null,
      recipients: [`@agent-${(index + 1) % 100}`],
      idempotencyKey: null,
      requestHash: 'h'.repeat(64),
    },
    metadata: {
      commandId: randomUUID(),
      correlationId: randomUUID(),
      causationId: randomUUID(),
      actor: `@agent-${index % 100}`,
      at,
      schemaVersion: CURRENT_SCHEMA_VERSION,
    },
  };
}
