/**
 * Memory held by large messages on the embedded default: 20,000 direct sends of 60 KB bodies (each body its own
 * string, as from real clients) from 16 senders, each message then read back by its recipient (get_message), so
 * that every cache a message passes through (the write side's stream states, the read side's, the event store's
 * recent rows) sees it. Live heap and RSS after a full GC, every 5,000 messages.
 * Target: the live heap stays under the caches' byte budgets (~80 MiB in all) plus the process's own ~40 MB,
 * however many large messages went through: <= 150 MB. Before the budgets (count-bounded caches only) it was
 * 1.1-1.4 GB at these sizes.
 */
import { agentIdentity, openEmbeddedMailbox, registerAgents } from '../lib/mailbox';
import { memoryMb, type MemoryFigures } from '../lib/memory';
import { atMost } from '../lib/report';
import { runBench } from '../lib/runBench';
import { scaled } from '../lib/scale';
import { closedLoop } from '../lib/timing';
import { withTmpDir } from '../lib/tmp';

const BODY_CHARS = 60_000;
const MESSAGES = scaled(20_000, 2_000);
const STEP = MESSAGES / 4;
const SENDERS = 16;
const AGENTS = 8;

runBench('core/largeMessages', async (report) => {
  report.note(
    'setup',
    `${MESSAGES} direct sends of ${BODY_CHARS}-character bodies, ${SENDERS} senders, ${AGENTS} agents, each read back`,
  );
  await withTmpDir(async (dir) => {
    const mailbox = await openEmbeddedMailbox(dir);
    try {
      const clients = await registerAgents(
        mailbox,
        Array.from({ length: AGENTS }, (_unused, i) => agentIdentity(i)),
      );
      const start = memoryMb();
      report.log(`  before: heap ${start.heapUsedMb} MB, RSS ${start.rssMb} MB`);
      const samples: MemoryFigures[] = [];
      for (let sent = 0; sent < MESSAGES; sent += STEP) {
        await closedLoop(STEP, SENDERS, async (index, worker) => {
          const from = worker % AGENTS;
          const to = (from + 1) % AGENTS;
          // A body of its own per message (a shared string would hide what a cache holds).
          const body = `${sent + index}:`.padEnd(BODY_CHARS, 'x');
          const { messageId } = await clients[from].send({ to: agentIdentity(to), subject: `Large ${sent + index}`, body });
          const read = await clients[to].getMessage(messageId);
          if (read.body.length !== BODY_CHARS)
            throw new Error(`message ${messageId} came back with ${read.body.length} characters`);
        });
        const figures = memoryMb();
        samples.push(figures);
        report.log(`  ${sent + STEP} messages: heap ${figures.heapUsedMb} MB, RSS ${figures.rssMb} MB`);
      }
      const last = samples[samples.length - 1];
      report.metric(
        `live heap after ${MESSAGES} messages of ${BODY_CHARS / 1000} KB (after GC)`,
        last.heapUsedMb,
        'MB',
        atMost(150),
        {
          samplesMb: samples.map((s) => s.heapUsedMb),
          beforeMb: start.heapUsedMb,
          bodiesSentMb: Math.round((MESSAGES * BODY_CHARS) / 1e6),
        },
      );
      report.metric('RSS after them (after GC)', last.rssMb, 'MB', undefined, {
        samplesMb: samples.map((s) => s.rssMb),
        beforeMb: start.rssMb,
      });
    } finally {
      await mailbox.close();
    }
  });
});
