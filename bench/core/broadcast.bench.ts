/**
 * A broadcast to 1,000 agents on the embedded default: from the send call until
 * it is acknowledged (durable, 1,001 events in one atomic append) and every
 * recipient's inbox view shows it. Target: <= 250 ms.
 *
 * Then the last one read through: each recipient marks it read, one after another, and the figures are the
 * read's latency and the process's CPU per read. Each receipt folds into the message's state, which holds
 * every recipient's: a receipt that cost the whole audience (a copy of it) made reading one broadcast through
 * quadratic in its audience (commands/layeredMap.ts).
 */
import { ADMIN_ACTOR } from '../../src/commands/roles';
import { messageStream } from '../../src/events/streams';
import type { MailboxClient } from '../../src/mailbox';
import { agentIdentity, openEmbeddedMailbox, registerAgents } from '../lib/mailbox';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { median, round, summarize } from '../lib/stats';
import { cpuMs } from '../lib/cpu';
import { nowMs, timeMs } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';

const AUDIENCE = scaled(1_000, 100);
const BROADCASTS = 9;
const WARMUP = 2;

/** Every recipient's view holds the message unread (checked after timing; a miss fails the benchmark). */
async function viewsHold(recipients: readonly MailboxClient[], messageId: string): Promise<boolean> {
  for (const client of recipients) {
    const page = await client.listMessages({ status: 'unread', limit: 1 });
    if (page.messages[0]?.messageId !== messageId) return false;
  }
  return true;
}

runBench('core/broadcast', async (report) => {
  await withTmpDir(async (dir) => {
    const mailbox = await openEmbeddedMailbox(dir);
    try {
      const identities = Array.from({ length: AUDIENCE + 1 }, (_unused, i) => agentIdentity(i));
      const registerMs = await timeMs(() => registerAgents(mailbox, identities));
      const [sender, ...recipients] = identities.map((identity) => mailbox.asActor({ identity, role: 'agent' }));
      report.note(
        'setup',
        `${AUDIENCE} recipients + 1 sender registered one by one in ${Math.round(registerMs)} ms ` +
          `(${round(registerMs / identities.length)} ms each); ${BROADCASTS} broadcasts after ${WARMUP} warm-up`,
      );

      const viewsMs: number[] = [];
      let lastMessageId = '';
      for (let i = 0; i < WARMUP + BROADCASTS; i++) {
        const started = nowMs();
        const sent = await sender.send({ to: 'AGENT:*', subject: `All hands ${i}`, body: 'Standup moved to 10:00.' });
        const acked = nowMs() - started;
        // The command awaits its own events in the views (read-your-writes): at the ack the projection
        // checkpoint must have reached the broadcast's last event. Not the log head: the listings below record
        // the recipients' seen marks in the background, and those may land in the log after the next broadcast.
        // Then confirm every view and count, untimed.
        const own = await mailbox.eventStore.readStream(messageStream(sent.messageId));
        const checkpoint = await mailbox.projections.checkpoint();
        const last = own[own.length - 1]?.position ?? null;
        if (own.length !== AUDIENCE + 1) throw new Error(`${own.length} events in the broadcast, expected ${AUDIENCE + 1}`);
        if (checkpoint === null || last === null || checkpoint < last)
          throw new Error(`acknowledged at projection checkpoint ${checkpoint}, the broadcast's last event at ${last}`);
        if (sent.recipients.length !== AUDIENCE) throw new Error(`audience ${sent.recipients.length}, expected ${AUDIENCE}`);
        if (!(await viewsHold(recipients, sent.messageId))) throw new Error(`broadcast ${i} missing from a view after ack`);
        const counted = (await mailbox.asActor(ADMIN_ACTOR).heartbeats()).agents.filter((a) => a.unread === i + 1).length;
        if (counted !== AUDIENCE) throw new Error(`${counted} agents count ${i + 1} unread, expected ${AUDIENCE}`);
        if (i >= WARMUP) viewsMs.push(acked);
        lastMessageId = sent.messageId;
      }
      const summary = summarize(viewsMs);
      report.metric(
        `broadcast to ${AUDIENCE}: acknowledged with every view updated (median)`,
        median(viewsMs),
        'ms',
        atMost(250),
        { runs: viewsMs.map(round), p90: round(summary.p90), max: round(summary.max) },
      );
      report.metric(`broadcast to ${AUDIENCE}: worst of ${BROADCASTS}`, summary.max, 'ms');

      const readMs: number[] = [];
      const cpuBefore = cpuMs();
      for (const recipient of recipients) {
        const started = nowMs();
        await recipient.markRead({ messageId: lastMessageId });
        readMs.push(nowMs() - started);
      }
      const readCpuMs = cpuMs() - cpuBefore;
      const receipts = (await mailbox.eventStore.readStream(messageStream(lastMessageId))).filter(
        (event) => event.type === 'ReceiptRead',
      ).length;
      if (receipts !== AUDIENCE) throw new Error(`${receipts} receipts of the broadcast, expected ${AUDIENCE}`);
      const reads = summarize(readMs);
      report.latency(`broadcast to ${AUDIENCE} read through: each mark_read`, reads);
      report.metric(`broadcast to ${AUDIENCE} read through: process CPU per mark_read`, (readCpuMs / AUDIENCE) * 1000, 'µs');
    } finally {
      await mailbox.close();
    }
  });
});
