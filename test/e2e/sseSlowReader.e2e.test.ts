/**
 * A reader too slow to drain its event stream is cut (the server keeps at most MAX_BUFFERED_BYTES for it), and the
 * operator's log says so: the cut was silent, the reader saw its connection drop and the operator nothing.
 */
import net from 'node:net';
import { appendLog, generateLog } from '../contract/projectionStoreLog';
import { recordingLogger } from '../support/recordingLogger';
import { startTestServer, type TestServer } from '../support/httpServer';
import { waitFor } from '../support/waitFor';

const log = recordingLogger();
let server: TestServer;
let auditor: string;
beforeAll(async () => {
  server = await startTestServer({}, { logger: log.logger });
  auditor = (await server.register(['@ops'], 'auditor'))['@ops'];
  // Far more than the loopback socket's buffers and the server's 1 MiB: a reader that reads nothing is cut.
  await appendLog(server.mailbox.eventStore, generateLog(40_000, 11));
}, 120_000);
afterAll(async () => {
  await server?.close();
});

test('an audit stream whose reader reads nothing is cut, and the log says whose and how much it left unread', async () => {
  const { hostname, port } = new URL(server.url);
  const socket = net.connect(Number(port), hostname);
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined); // the cut may reach it as a reset
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.pause(); // reads nothing
  socket.write(
    `GET /v1/audit/stream?after=0 HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${auditor}\r\n` +
      'Accept: text/event-stream\r\n\r\n',
  );
  try {
    await waitFor(() => log.warnings().some((line) => line.startsWith('audit stream cut')), {
      timeoutMs: 60_000,
      what: 'the log line of the cut',
    });
    const line = log.lines.find((entry) => String(entry.msg).startsWith('audit stream cut'))!;
    expect(line).toMatchObject({ identity: '@ops', unreadBytes: expect.any(Number) });
    expect(line.unreadBytes as number).toBeGreaterThan(1024 * 1024);
    expect(line.msg).toBe(
      `audit stream cut: its reader left ${line.unreadBytes as number} bytes unread (more than 1048576 are not kept); it ` +
        'resumes from its last event id when it reconnects',
    );
    socket.resume(); // drains what reached it, then sees the end
    await waitFor(() => closed, { timeoutMs: 30_000, what: 'the cut connection closed' });
  } finally {
    socket.destroy();
  }
}, 120_000);
