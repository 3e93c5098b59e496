/** How often the open loop looks at what is due. */
const TICK_MS = 2;

/**
 * An open loop: `send(i)` is called for every request due at `rate` a second since `run` began (looked at every
 * 2 ms), whatever the server's answers, never with more than `maxInFlight` unanswered (a tick that finds requests
 * due beyond that counts in `capHits`). `i` runs on across runs: a warm-up, then the measured run.
 */
export class OpenLoop {
  inFlight = 0;
  issued = 0;
  capHits = 0;

  constructor(
    private readonly rate: number,
    private readonly maxInFlight: number,
    private readonly send: (index: number) => Promise<unknown>,
  ) {}

  /** Offers requests for `seconds` and returns when they are offered (answers may still be due); `onTick` after each tick. */
  async run(seconds: number, onTick: (begin: number) => void = () => undefined): Promise<number> {
    const begin = performance.now();
    const end = begin + seconds * 1000;
    let offered = 0;
    while (performance.now() < end) {
      const due = Math.floor(((performance.now() - begin) / 1000) * this.rate) - offered;
      const room = this.maxInFlight - this.inFlight;
      if (due > room) this.capHits += 1;
      for (let i = 0; i < Math.min(due, room); i += 1, offered += 1) this.offer();
      onTick(begin);
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    return begin;
  }

  /** Resolves once every request offered has been answered. */
  async drained(): Promise<void> {
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  private offer(): void {
    this.inFlight += 1;
    const settled = () => {
      this.inFlight -= 1;
    };
    this.send(this.issued++).then(settled, settled);
  }
}

/**
 * Load-generator side of the HTTP benchmarks: JSON requests over keep-alive
 * node:http connections (cheaper per request than fetch, so the client is not
 * the bottleneck), an open loop that offers them at a fixed rate, and SSE wake
 * subscribers that timestamp each event.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export class JsonClient {
  private readonly agent: http.Agent;
  private readonly base: URL;

  constructor(url: string, connections: number) {
    this.base = new URL(url);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  }

  request<T = any>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.base.hostname,
          port: this.base.port,
          method,
          path,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface WakeArrival {
  messageId: string;
  at: number;
}

/** One GET /v1/wake stream; resolves once its `sync` event has arrived. */
export function openWakeStream(url: string, token: string, onWake: (wake: WakeArrival) => void): Promise<{ close(): void }> {
  const base = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: base.hostname,
        port: base.port,
        path: '/v1/wake',
        agent: false,
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`wake stream: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        let buffer = '';
        let synced = false;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = performance.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (block.startsWith('event: sync') && !synced) {
              synced = true;
              resolve({ close: () => req.destroy() });
            } else if (block.startsWith('event: wake')) {
              const data = block.slice(block.indexOf('data: ') + 6);
              onWake({ messageId: (JSON.parse(data) as { messageId: string }).messageId, at });
            }
          }
        });
        res.on('error', () => {});
      },
    );
    req.on('error', (error) => reject(error));
  });
}

/** Registers agents as the admin over HTTP, one after another (each is a durable registry append). */
export async function registerOverHttp(client: JsonClient, adminToken: string, identities: readonly string[]): Promise<string[]> {
  const tokens: string[] = [];
  for (const identity of identities) {
    const { status, body } = await client.request<{ token: string }>('POST', '/v1/agents', adminToken, { identity });
    if (status !== 201) throw new Error(`registering ${identity}: HTTP ${status} ${JSON.stringify(body)}`);
    tokens.push(body.token);
  }
  return tokens;
}
