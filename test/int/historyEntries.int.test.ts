/**
 * A task's history entry id (get_task's history[].messageId) passed to get_message or get_task, on every event store.
 * The refusal said "read it with get_task {"taskId": "<the entry's taskId>"}": an agent that kept only the id (the
 * entry of the answer that moved its task) could not find the task again. The refusal now names the task to whoever
 * may read it: its sender, its holder, an auditor; an outsider is told what it is told for an id that names nothing.
 * Alike on every event store: memory and SQLite find the event by its id in the log; EventStoreDB cannot, and the views
 * say which task each history line's id belongs to (on EventStoreDB the answer was the generic one, naming no task).
 * Three agents and an auditor; nothing is written.
 */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import type { MailboxConfigInput } from '../../src/config';
import { registerAgents } from '../support/fixtures';
import { startRedis, type TestRedis } from '../support/redisServer';
import { expectRejectedWithoutEvents, mailboxHarness, STORE_KINDS } from './coreHarness';

/** The views the mailbox keeps: its default (memory with EventStoreDB) or a real Redis (where the production pair keeps them). */
let redis: TestRedis | null = null;
afterAll(async () => {
  await redis?.stop();
});
const inRedis = async (): Promise<MailboxConfigInput> => {
  redis ??= await startRedis();
  return { redisUrl: redis.url, redisNamespace: `lines${process.pid}${Date.now()}`, redisTimeoutMs: 10_000 };
};
const esdb = STORE_KINDS.find((kind) => kind.name === 'esdb (test double)')!;
const VARIANTS = [
  ...STORE_KINDS.map((kind) => ({ name: kind.name, kind, views: async (): Promise<MailboxConfigInput> => ({}) })),
  { name: `${esdb.name}, views in Redis`, kind: esdb, views: inRedis },
];

describe.each(VARIANTS)('history entry ids ($name event store)', ({ kind, views }) => {
  const base = mailboxHarness(kind);
  const harness = { open: async () => base.open(await views()) };

  /** @a's task to @b, Working; @c is no party to it; @aud an auditor. */
  const workingTask = async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { token } = await mailbox.asActor(ADMIN_ACTOR).registerAgent({ identity: '@aud', role: 'auditor' });
    const auditor = await mailbox.as(token);
    const { messageId: taskId } = await a.send({ to: '@b', subject: 'port it', body: 'x', task: {} });
    await b.updateTask({ taskId, to: 'Working' });
    return { mailbox, a, b, c, auditor, taskId };
  };

  // The library's refusals name its methods (getTask('<id>')) where HTTP and MCP name their tools and routes.
  it("get_message, get_task, claim_task and update_task given an entry's id name its task to its parties, to nobody else", async () => {
    const { mailbox, a, b, c, auditor, taskId } = await workingTask();
    await b.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    await a.send({ to: '@b', subject: 'main', body: 'main', threadId: taskId }); // the answer: an entry of @a's
    const { history } = await a.getTask(taskId);
    const text = (line: (typeof history)[number]) => JSON.stringify(line.parts[0]);
    const question = history.find((line) => text(line).includes('which branch?'))!.messageId;
    const answer = history.at(-1)!.messageId;
    expect(history.at(-1)!.parts[0]).toMatchObject({ kind: 'text', text: expect.stringMatching(/^reply .*: main$/) });
    const nothing = '00000000-0000-4000-8000-000000000000';

    for (const id of [question, answer]) {
      for (const reader of [a, b, auditor]) {
        const asMessage = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => reader.getMessage(id));
        const asTask = await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => reader.getTask(id));
        expect(asMessage.envelope).toMatchObject({ messageId: id, taskId });
        expect(asMessage.message).toBe(
          `${id} is no message: it is an entry of the history of task ${taskId} (getTask's history[].messageId or ` +
            `status.message.messageId). Read the task with getTask('${taskId}'); ` +
            `the message that opened it is getMessage('${taskId}').`,
        );
        expect(asTask.envelope).toMatchObject({ taskId: id, entryOf: taskId });
        expect(asTask.message).toBe(
          `${id} is no task: it is an entry of the history of task ${taskId} (its history[].messageId or ` +
            `status.message.messageId). Read that task with getTask('${taskId}').`,
        );
      }
      // Claimed or moved by it (claim_task, update_task): told the task's own id to give instead.
      for (const attempt of [() => b.claimTask(id), () => b.updateTask({ taskId: id, to: 'Completed' })]) {
        const moved = await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', attempt);
        expect([moved.envelope.entryOf, moved.message]).toEqual([
          taskId,
          `${id} is no task: it is an entry of the history of task ${taskId} (its history[].messageId or ` +
            `status.message.messageId). Give the task's own id: {"taskId": "${taskId}"}; getTask reads it.`,
        ]);
      }
      const outsiderMove = await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => c.claimTask(id));
      const noMove = await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => c.claimTask(nothing));
      expect(outsiderMove.envelope).toEqual({ ...noMove.envelope, taskId: id, message: noMove.message.replace(nothing, id) });
      // An outsider learns nothing: word for word the answer to an id that names nothing.
      const outsider = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => c.getMessage(id));
      const none = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => c.getMessage(nothing));
      expect(outsider.envelope).toEqual({ ...none.envelope, messageId: id, message: none.message.replace(nothing, id) });
      const outsiderTask = await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => c.getTask(id));
      const noTask = await expectRejectedWithoutEvents(mailbox, 'TASK_NOT_FOUND', () => c.getTask(nothing));
      expect(outsiderTask.envelope).toEqual({ ...noTask.envelope, taskId: id, message: noTask.message.replace(nothing, id) });
    }
  });

  // It told every caller to look in its outbox, where no such message is: the sender could not find its ledger again.
  it("get_delivery given an entry's id names its task: the sender its ledger, the holder the task, an outsider nothing", async () => {
    const { mailbox, a, b, c, auditor, taskId } = await workingTask();
    const id = (await a.getTask(taskId)).history.at(-1)!.messageId;
    const nothing = '00000000-0000-4000-8000-000000000000';
    const entry = `${id} is no message: it is an entry of the history of task ${taskId} (getTask's history[].messageId or status.message.messageId), and has no delivery ledger. `;

    for (const [reader, code] of [
      [a, 'FORBIDDEN'],
      [auditor, 'MESSAGE_NOT_FOUND'],
    ] as const) {
      const refused = await expectRejectedWithoutEvents(mailbox, code, () => reader.delivery(id));
      expect([refused.envelope.taskId, refused.message]).toEqual([
        taskId,
        `${entry}The ledger of the message that carried the task is delivery('${taskId}').`,
      ]);
    }
    const holder = await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => b.delivery(id));
    expect(holder.message).toBe(
      `${entry}Read the task with getTask('${taskId}'); a delivery ledger is shown only to its sender, auditors and admins.`,
    );
    // An outsider learns nothing: word for word the answer to an id that names nothing.
    const outsider = await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => c.delivery(id));
    const none = await expectRejectedWithoutEvents(mailbox, 'FORBIDDEN', () => c.delivery(nothing));
    expect(outsider.envelope).toEqual({ ...none.envelope, messageId: id, message: none.message.replace(nothing, id) });
    expect((await a.delivery(taskId)).messageId).toBe(taskId);
  });

  it("add_message replying to an entry's id (the holder's question) names its task and the inReplyTo that answers it", async () => {
    const mailbox = await harness.open();
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { messageId: taskId } = await a.send({ to: '@b', subject: 'port it', body: 'x', task: {} });
    await b.updateTask({ taskId, to: 'Working' });
    await b.updateTask({ taskId, to: 'InputRequired', note: 'which branch?' });
    const question = (await a.getTask(taskId)).history.at(-1)!.messageId;
    const reply = { to: '@b', subject: 'main', body: 'main', inReplyTo: question };

    const refused = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => a.send(reply));
    const nothing = '00000000-0000-4000-8000-000000000000';
    expect(refused.envelope).toMatchObject({ field: 'inReplyTo', messageId: question, taskId });
    expect(refused.message).toBe(
      `inReplyTo names ${question}, which is no message: it is an entry of the history of task ${taskId} ` +
        `(getTask's history[].messageId). To write in that task's thread (and answer its question, when you sent it ` +
        `and write to its holder), reply to the task's message: inReplyTo "${taskId}".`,
    );
    // An outsider (@c writes to @b) learns nothing: the answer to an id that names nothing.
    const outsider = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => c.send(reply));
    const none = await expectRejectedWithoutEvents(mailbox, 'MESSAGE_NOT_FOUND', () => c.send({ ...reply, inReplyTo: nothing }));
    expect(outsider.envelope).toEqual({
      ...none.envelope,
      messageId: question,
      message: none.message.replace(nothing, question),
    });

    // Done as it says: the reply to the task's message answers it.
    const sent = await a.send({ ...reply, inReplyTo: taskId });
    expect(sent.warnings?.map((w) => `${w.code} ${String(w.taskId)}`)).toEqual([`TASK_ANSWERED ${taskId}`]);
  });
});
