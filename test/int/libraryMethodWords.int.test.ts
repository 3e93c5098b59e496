/**
 * The library's refusals name its methods. They were said in the MCP tools' and HTTP routes' words, which a library
 * user has no way to call: getMessage('nope') was told "get_message: 'messageId' must be a message id ... (list_messages'
 * messageId, list_tasks' taskId)", a wrong token "An agent gets its token when an admin registers it (POST
 * /v1/agents); the admin token is the server's MAILBOX_ADMIN_TOKEN ..." with the hint "Send Authorization: Bearer
 * <token>", an agent's registerAgent to ask for "their MAILBOX_ADMIN_TOKEN". HTTP and MCP answer in their own words, as
 * before (emptyPathId.e2e, idWithinText.e2e).
 */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { MailboxError } from '../../src/errors';
import { allEvents, ADMIN_TOKEN, memoryMailbox, registerAgents } from '../support/fixtures';
import { rejectionOf } from './coreHarness';

/** What a library user should never be told: a tool's name, a route, a variable, an HTTP header. */
const NOT_LIBRARY_WORDS =
  /\b(add_message|get_message|list_messages|mark_read|archive_message|unarchive_message|get_delivery|unread_count|list_agents|list_tasks|get_task|claim_task|update_task)\b|\/v1\/|MAILBOX_|Authorization|\b\w+=@/;

test('a refusal of a client method or of mailbox.as names methods and options, not tools, routes or variables; nothing written', async () => {
  const mailbox = await memoryMailbox({ adminToken: ADMIN_TOKEN });
  try {
    const { '@a': a, '@b': b, '@c': c } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const { messageId } = await a.send({ to: '@b', subject: 'plain', body: 'x' });
    const before = (await allEvents(mailbox)).length;
    const refusals: Array<[() => Promise<unknown>, string, string]> = [
      [
        () => mailbox.as('not-a-token'),
        'UNAUTHENTICATED',
        "An agent gets its token when an admin registers it (registerAgent); the admin token is createMailbox's adminToken.",
      ],
      [() => a.getMessage('nope'), 'VALIDATION_FAILED', "getMessage: 'messageId' must be a message id"],
      [() => a.getMessage('nope'), 'VALIDATION_FAILED', "a listing shows it (listMessages' messageId, listTasks' taskId)"],
      [() => b.markRead({ messageId: 'x' }), 'VALIDATION_FAILED', "markRead: 'messageId' must be a message id"],
      [() => a.listMessages({ limit: 0 }), 'VALIDATION_FAILED', "listMessages: 'limit' takes a whole number from 1 to 200"],
      [() => a.listMessages({ from: '@B' }), 'VALIDATION_FAILED', "Did you mean { from: '@b' }?"],
      [() => c.delivery(messageId), 'FORBIDDEN', "check the id in your outbox (listMessages({ box: 'outbox' }))."],
      [() => b.claimTask(messageId), 'TASK_NOT_FOUND', 'listTasks lists yours. The message itself is read with getMessage.'],
      [
        () => a.registerAgent({ identity: '@q' }),
        'FORBIDDEN',
        "which whoever runs the mailbox holds (createMailbox's adminToken).",
      ],
      [() => mailbox.asActor(ADMIN_ACTOR).retireAgent('@nobody'), 'AGENT_NOT_FOUND', 'listAgents() lists the registered ones.'],
    ];
    for (const [call, code, words] of refusals) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(MailboxError);
      expect([error.code, error.message]).toEqual([code, expect.stringContaining(words)]);
      expect(JSON.stringify(error.envelope)).not.toMatch(NOT_LIBRARY_WORDS);
    }
    const token = await rejectionOf(mailbox.as('not-a-token'));
    expect(token.envelope.hint).toBe(
      "Pass mailbox.as the token registerAgent returned (its 'token'), or createMailbox's adminToken",
    );
    const invalid = await rejectionOf(a.getMessage('nope'));
    expect(invalid.envelope).toMatchObject({ field: 'messageId', issues: [{ field: 'messageId' }] });
    expect((invalid.envelope.issues as Array<{ message: string }>)[0].message).toContain("(listMessages' messageId");
    expect((await allEvents(mailbox)).length).toBe(before);
  } finally {
    await mailbox.close();
  }
});

// A send to oneself was told, in its SELF_ADDRESSED warning, to find the others with "list_agents or GET /v1/agents".
test("a send's warnings name methods too; the same send replayed says the same", async () => {
  const mailbox = await memoryMailbox({ adminToken: ADMIN_TOKEN });
  try {
    const { '@a': a } = await registerAgents(mailbox, ['@a', '@b', '@c']);
    const input = { to: ['@a', '@b', '@c'], subject: 'to us', body: 'x' };
    const sent = await a.send(input, { idempotencyKey: 'self-1' });
    const self = sent.warnings?.find((warning) => warning.code === 'SELF_ADDRESSED');
    expect(self?.message).toContain('send it again to its identity (listAgents() names them).');
    expect(JSON.stringify(sent.warnings)).not.toMatch(NOT_LIBRARY_WORDS);
    const { result, replayed } = await a.sendOutcome(input, { idempotencyKey: 'self-1' });
    expect([replayed, result]).toEqual([true, sent]);
  } finally {
    await mailbox.close();
  }
});
