/**
 * The events a send decides are held in memory (the stream-state cache keeps each message's MessageSent):
 * issue 15 found each one carrying a V8 hidden class of its own (~800 bytes), because its data were built
 * by spreading a summary and adding fields. Built as one literal, every MessageSent shares one, and the
 * log stores the same JSON as before (same fields, same order).
 */
import v8 from 'node:v8';
import { foldRegistry, initialRegistryState } from '../../src/commands/agentRegistry';
import { initialMessageState } from '../../src/commands/message';
import { sendMessageSchema } from '../../src/commands/schemas';
import { decideSendMessage, type SendMessage, type SendState } from '../../src/commands/sendMessage';
import { parseInput } from '../../src/commands/validation';
import type { MessageEvent } from '../../src/events/types';
import { A, meta, registered } from './fixtures/domain';

v8.setFlagsFromString('--allow-natives-syntax'); // for the function below, compiled after it: V8's own test of hidden classes
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

const state: SendState = {
  message: initialMessageState(),
  registry: foldRegistry(initialRegistryState(), [registered('@alice'), registered('@bob'), registered('@carol')]),
  parent: null,
};

function decide(messageId: string, input: Record<string, unknown>): MessageEvent[] {
  const command: SendMessage = {
    type: 'SendMessage',
    data: { messageId, input: parseInput(sendMessageSchema, input, 'add_message'), requestHash: `hash-${messageId}` },
    metadata: meta(A),
  };
  const events = decideSendMessage(command, state, { maxBodyBytes: 1024, strictRecipients: false });
  if (!Array.isArray(events)) throw events;
  return events;
}

// The spread's own class per object appeared from its ~10th run on (once V8's clone cache was warm): many sends.
const MANY = 50;

test('the MessageSent of many sends share one hidden class, in the order the log stores its fields', () => {
  const sent = Array.from({ length: MANY }, (_unused, i) => decide(`m-${i}`, { to: '@bob', subject: `s${i}`, body: 'hello' })[0]);
  const [first] = sent;
  const second = decide('m-last', { to: '@carol', subject: 'two', body: 'again', tags: ['x'], priority: 'high' })[0];
  expect(Object.keys(first.data)).toEqual([
    'messageId',
    'from',
    'to',
    'subject',
    'priority',
    'threadId',
    'inReplyTo',
    'tags',
    'sentAt',
    'wakeSuppressed',
    'hasTask',
    'body',
    'task',
    'recipients',
    'idempotencyKey',
    'requestHash',
  ]);
  expect(sent.filter((event) => !haveSameMap(event.data, second.data))).toEqual([]);
});

test('the BroadcastDelivered of broadcasts share one hidden class, summary first', () => {
  const deliveries = Array.from({ length: MANY }, (_unused, i) =>
    decide(`b-${i}`, { to: 'AGENT:*', subject: 'all', body: 'hello all' }).slice(1),
  ).flat();
  const [toBob] = deliveries;
  expect(toBob.type).toBe('BroadcastDelivered');
  expect(Object.keys(toBob.data)).toEqual([
    'messageId',
    'from',
    'to',
    'subject',
    'priority',
    'threadId',
    'inReplyTo',
    'tags',
    'sentAt',
    'wakeSuppressed',
    'hasTask',
    'recipient',
    'deliveredAt',
  ]);
  expect(deliveries.filter((event) => !haveSameMap(event.data, toBob.data))).toEqual([]);
});
