/**
 * Acceptance (issue 13): the delivery ledger is a view of the log alone, so a
 * mailbox opened again on the same SQLite log (views rebuilt from it) shows
 * the same ledger, stage for stage, and so do the scratch views `audit verify`
 * rebuilds into. The woken stage comes from WakeObserved events in the log.
 */
import { createMailbox, type Mailbox } from '../../src/mailbox';
import { projectStored } from '../../src/projections/projector';
import { ScratchViews } from '../../src/projections/readModel/scratchViews';
import { ADMIN_TOKEN, registerAgents, silentLogger, tempDir } from '../support/fixtures';

const open = (dir: string) =>
  createMailbox(
    { eventStoreUrl: `sqlite:${dir}/events.sqlite`, adminToken: ADMIN_TOKEN, logLevel: 'silent' },
    { logger: silentLogger },
  );

let mailbox: Mailbox | null = null;
afterEach(async () => {
  await mailbox?.close();
  mailbox = null;
});

async function settled(m: Mailbox): Promise<void> {
  await m.wakeRecorder.flush();
  const head = await m.eventStore.headPosition();
  expect(await m.runner.waitFor(head!, 5000)).toBe(true);
}

it('the ledger after reopening the log (views rebuilt) equals the ledger before, and the scratch rebuild agrees', async () => {
  const dir = tempDir();
  mailbox = await open(dir);
  const agents = await registerAgents(mailbox, ['@a', '@b', '@c', '@d']);
  const dm = await agents['@a'].send({ to: '@b', subject: 's', body: 'b' });
  const broadcast = await agents['@a'].send({ to: 'AGENT:*', subject: 's', body: 'b' });
  mailbox.wakeRecorder.observed(dm.messageId, '@b', 'stream');
  mailbox.wakeRecorder.observed(broadcast.messageId, '@c', 'webhook');
  await agents['@b'].markRead({ messageId: dm.messageId });
  await agents['@d'].markRead({ messageId: broadcast.messageId });
  await agents['@b'].send({ to: '@a', subject: 're', body: 'b', inReplyTo: dm.messageId });
  await settled(mailbox);
  const ids = [dm.messageId, broadcast.messageId];
  const before = await Promise.all(ids.map((id) => agents['@a'].delivery(id)));
  expect(before[0].summary).toEqual({ recipients: 1, inView: 1, woken: 1, seen: 0, read: 1, replied: 1 });
  expect(before[1].summary).toEqual({ recipients: 3, inView: 3, woken: 1, seen: 0, read: 1, replied: 0 });
  await mailbox.close();

  mailbox = await open(dir);
  await settled(mailbox);
  const a = await mailbox.as(agents['@a'].token);
  expect(await Promise.all(ids.map((id) => a.delivery(id)))).toEqual(before);

  const scratch = new ScratchViews();
  scratch.applyBatch((await mailbox.eventStore.readAll(null, 10_000)).map(projectStored));
  for (const id of ids) {
    expect(scratch.deliveryLedger(id, { after: null, limit: 100 })).toEqual(
      await mailbox.projections.deliveryLedger(id, { after: null, limit: 100 }),
    );
  }
});
