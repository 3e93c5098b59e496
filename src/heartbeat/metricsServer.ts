/**
 * The daemon's own small HTTP endpoint (loopback by default): GET /metrics
 * (Prometheus), GET /healthz (503 while an alarm is raised), GET /status (JSON).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { StartupError } from '../startupError';
import { FETCH_BLOCKED_PORT_REASON, FETCH_BLOCKED_PORTS } from '../support/fetchBlockedPorts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export interface HealthReport {
  healthy: boolean;
  [detail: string]: unknown;
}

const sendJson = (response: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/**
 * A port fetch refuses (support/fetchBlockedPorts.ts: 6667, 10080, ...): the image's health check (a fetch of /healthz)
 * and a browser could never reach the daemon there. Refused at start as serve refuses such a MAILBOX_PORT.
 */
export function checkMetricsPortReachable(port: number): void {
  if (!FETCH_BLOCKED_PORTS.has(port)) return;
  throw new StartupError(
    `${PORT_OPTION}: '${port}' is not a port to serve on: port ${port} is ${FETCH_BLOCKED_PORT_REASON}, so the ` +
      "image's health check and a browser could not reach the daemon's /healthz and /metrics there; give another port " +
      '(default 7421; 0 picks a free one), or off for no metrics endpoint.',
    { variable: 'MAILBOX_HEARTBEAT_METRICS_PORT' },
  );
}

/**
 * Binds the metrics address once and lets go (as `mailbox serve` probes MAILBOX_PORT), so that a port in use or an
 * address of another machine is refused before anything is opened: `mailbox serve --heartbeat` had generated and
 * printed the admin token, made the data dir and built the views before its heartbeat met the port and exited 2.
 * The real listen still translates the same errors, should another process take the port in between.
 */
export async function checkMetricsAddressFree(host: string, port: number): Promise<void> {
  checkMetricsPortReachable(port);
  await new Promise<void>((resolve, reject) => {
    const probe = http.createServer();
    probe.once('error', (error) => reject(listenRefusal(error, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export async function startMetricsServer(
  registry: Registry,
  health: () => HealthReport,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    response.setHeader('x-content-type-options', 'nosniff'); // as the API server's answers: read as the declared type only
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      // As the API server answers a method a route does not take: METHOD_NOT_ALLOWED, with the Allow header
      // (RFC 9110 requires it on a 405) and the same methods in the envelope.
      return sendJson(
        response,
        405,
        {
          error: 'Method not allowed',
          code: 'METHOD_NOT_ALLOWED',
          message: `${path} takes GET, not ${request.method}; the daemon serves GET /metrics, /healthz and /status.`,
          method: request.method,
          path,
          allow: ['GET'],
        },
        { allow: 'GET' },
      );
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          response.writeHead(200, { 'content-type': registry.contentType });
          response.end(text);
        },
        (error: Error) => sendJson(response, 500, { error: 'Internal error', code: 'INTERNAL', message: error.message }),
      );
      return;
    }
    if (path === '/healthz' || path === '/status') {
      const report = health();
      return sendJson(response, path === '/healthz' && !report.healthy ? 503 : 200, report);
    }
    sendJson(response, 404, {
      error: 'Not found',
      code: 'NOT_FOUND',
      message: `No route ${path}; try /metrics, /healthz or /status.`,
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenRefusal(error, host, port)));
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PORT_OPTION = '--metrics-port / MAILBOX_HEARTBEAT_METRICS_PORT';
const HOST_OPTION = '--metrics-host / MAILBOX_HEARTBEAT_METRICS_HOST';

/**
 * A listen failure the operator can fix, as one start-up line naming the flag and the variable (as `mailbox serve` says
 * a port in use). It read `{"error":"Heartbeat failed","code":"INTERNAL",...}`, and `mailbox serve --heartbeat`
 * printed a stack trace and exited 1. Anything else is left as it is.
 */
function listenRefusal(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const refusal = (message: string, variable: string) => new StartupError(message, { variable }, { cause: error });
  switch (code) {
    case 'EADDRINUSE':
      return refusal(
        `${PORT_OPTION}: port ${port} on ${host} is in use (another heartbeat daemon, or another server?): give a free port (0 picks one), ` +
          'or off for no metrics endpoint.',
        'MAILBOX_HEARTBEAT_METRICS_PORT',
      );
    case 'EACCES':
      return refusal(
        `${PORT_OPTION}: port ${port} needs privileges this user lacks: give 1024 or above, or off.`,
        'MAILBOX_HEARTBEAT_METRICS_PORT',
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return refusal(
        `${HOST_OPTION}: '${host}' is not an address of this machine: give one of its addresses (127.0.0.1 for ` +
          'loopback, the default).',
        'MAILBOX_HEARTBEAT_METRICS_HOST',
      );
    default:
      return error;
  }
}
