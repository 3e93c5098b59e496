/**
 * Acceptance (issue 13), the delivery ledger over real HTTP with A, B, C, D:
 * a DM to B with an open wake stream is woken, a DM to C with none is not;
 * read and reply move the stages; A (the sender), auditors and admins see
 * them; any other agent gets 403, whether or not the message exists.
 */
import { startTestServer, type TestServer } from '../support/httpServer';
import { subscribe, type WakeSubscriber } from './wakeSubscriber';

let server: TestServer;
let t: Record<string, string>;
let auditor: string;
const streams: WakeSubscriber[] = [];

beforeAll(async () => {
  server = await startTestServer();
  t = await server.register(['@a', '@b', '@c', '@d']);
  auditor = (await server.register(['@audit'], 'auditor'))['@audit'];
});
afterAll(async () => {
  for (const stream of streams) stream.close();
  await server.close();
});

const send = async (from: string, body: Record<string, unknown>) => {
  const sent = await server.call('POST', '/v1/messages', { token: t[from], body: { subject: 's', body: 'b', ...body } });
  expect(sent.status).toBe(201);
  return sent.body.messageId as string;
};
const delivery = (token: string, id: string, query = '') => server.call('GET', `/v1/messages/${id}/delivery${query}`, { token });

/** Asks until `done` holds for the ledger (the wake record is batched and then projected: both take a moment). */
async function ledgerUntil(id: string, done: (ledger: any) => boolean): Promise<any> {
  await server.mailbox.wakeRecorder.flush();
  await server.mailbox.seenMarks.flush();
  for (let attempt = 0; attempt < 200; attempt++) {
    const { status, body } = await delivery(t['@a'], id);
    expect(status).toBe(200);
    if (done(body)) return body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the ledger of ${id} never got there`);
}

test('woken with an open stream, not without; read and reply move their stages; the sender sees it all', async () => {
  const b = await subscribe(server.url, t['@b']);
  streams.push(b);
  await b.next((e) => e.event === 'sync');
  const toB = await send('@a', { to: '@b' });
  const toC = await send('@a', { to: '@c' });
  await b.next((e) => e.event === 'wake' && e.data.messageId === toB);

  const woken = await ledgerUntil(toB, (ledger) => ledger.summary.woken === 1);
  expect(woken).toMatchObject({
    messageId: toB,
    sender: '@a',
    wakeExpected: true,
    accepted: { position: expect.any(String) },
    summary: { recipients: 1, inView: 1, woken: 1, seen: 0, read: 0, replied: 0 },
    nextAfter: null,
  });
  expect(woken.recipients).toEqual([
    {
      recipient: '@b',
      inView: { position: woken.accepted.position },
      woken: { at: expect.any(String), via: 'stream' },
      seen: null,
      read: null,
      replied: null,
    },
  ]);

  // C has no stream: in view, never woken. (B's wake was recorded and projected after C's send: nothing is on its way.)
  const toCLedger = (await delivery(t['@a'], toC)).body;
  expect(toCLedger.summary).toEqual({ recipients: 1, inView: 1, woken: 0, seen: 0, read: 0, replied: 0 }); // C listed nothing
  expect(toCLedger.recipients[0]).toMatchObject({ recipient: '@c', woken: null });

  // B lists its inbox: seen (not read).
  const listed = await server.call('GET', '/v1/messages', { token: t['@b'] });
  expect(listed.body.messages.map((m: any) => m.messageId)).toContain(toB);
  const seen = await ledgerUntil(toB, (ledger) => ledger.summary.seen === 1);
  expect(seen.recipients[0]).toMatchObject({ seen: { at: expect.any(String) }, read: null });

  const read = await server.call('POST', `/v1/messages/${toB}/read`, { token: t['@b'] });
  const afterRead = await ledgerUntil(toB, (ledger) => ledger.summary.read === 1);
  expect(afterRead.recipients[0].read).toEqual({ at: read.body.readAt });

  const reply = await send('@b', { to: '@a', inReplyTo: toB });
  const afterReply = await ledgerUntil(toB, (ledger) => ledger.summary.replied === 1);
  expect(afterReply.recipients[0].replied).toEqual({ at: expect.any(String), messageId: reply });
  // The reply has a ledger of its own: A owes the thread an answer now.
  expect((await delivery(t['@b'], reply)).body.summary).toMatchObject({ recipients: 1, replied: 0 });
});

test('only the sender, auditors and admins see a ledger: any other agent gets 403, for a real or a made-up id alike', async () => {
  const toB = await send('@a', { to: '@b' });
  await ledgerUntil(toB, (ledger) => ledger.summary.inView === 1);
  const before = await server.eventCount();
  const unknown = '00000000-0000-4000-8000-000000000000';
  for (const who of ['@a', '@b', '@c', '@d']) {
    for (const id of who === '@a' ? [unknown] : [toB, unknown]) {
      const refused = await delivery(t[who], id);
      expect({ who, id, status: refused.status, code: refused.body.code }).toEqual({ who, id, status: 403, code: 'FORBIDDEN' });
      // One sentence, true for each of them (a recipient, a stranger, a sender with a mistyped id): no oracle, and it
      // says where the caller's own ids are. It said only "shown only to its sender", which a sender with a wrong id
      // read as "but I am the sender".
      expect(refused.body.message).toBe(
        `Message ${id} is not among the messages you sent, and a delivery ledger is shown only to its sender, auditors ` +
          'and admins: check the id in your outbox (list_messages {"box": "outbox"}, GET /v1/messages?box=outbox).',
      );
    }
  }
  expect((await delivery(auditor, toB)).body.summary.recipients).toBe(1);
  expect((await delivery(server.adminToken, toB)).status).toBe(200);
  const missing = await delivery(auditor, unknown);
  expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 'MESSAGE_NOT_FOUND' });
  const noToken = await server.call('GET', `/v1/messages/${toB}/delivery`);
  expect(noToken.status).toBe(401);
  expect(await server.eventCount()).toBe(before);
});

test('a broadcast ledger is paged by identity with the counts of all recipients; bad paging is refused with the valid form', async () => {
  const id = await send('@a', { to: 'AGENT:*' });
  const first = await ledgerUntil(id, (ledger) => ledger.summary.inView === 3);
  expect(first.summary.recipients).toBe(3); // @b @c @d: the agents other than the sender
  const page = (await delivery(t['@a'], id, '?limit=2')).body;
  expect(page.recipients.map((row: any) => row.recipient)).toEqual(['@b', '@c']);
  expect(page.nextAfter).toBe('@c');
  const next = (await delivery(t['@a'], id, `?limit=2&after=${encodeURIComponent(page.nextAfter)}`)).body;
  expect(next.recipients.map((row: any) => row.recipient)).toEqual(['@d']);
  expect(next.nextAfter).toBeNull();
  expect(next.summary).toEqual(page.summary);

  for (const [query, code] of [
    ['?limit=0', 'VALIDATION_FAILED'],
    ['?after=c', 'VALIDATION_FAILED'],
    ['?cursor=x', 'UNKNOWN_FIELD'],
    [`?messageId=${id}`, 'UNKNOWN_FIELD'],
  ]) {
    const refused = await delivery(t['@a'], id, query);
    expect({ query, status: refused.status, code: refused.body.code }).toEqual({ query, status: 400, code });
  }
});
