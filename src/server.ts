/**
 * Starts the whole server: the admin token, the mailbox (store, views, wake
 * bus) and the HTTP API on host:port, saying in the log what it runs on.
 * Order: every check that needs no server first, then wait for Redis and
 * EventStoreDB, and only then create anything (the stores, then the admin
 * token), so a bad setting or a store refused at start (read-only, served by
 * another mailbox) never leaves a freshly generated token behind, nor prints one. A failure an
 * operator can fix is a StartupError (one line naming the variable).
 */
import type { Logger } from 'pino';
import type { MailboxConfig } from './config';
import { openMailbox, type Mailbox } from './mailbox';
import { keepAdminToken, prepareAdminToken, type AdminToken } from './adminToken';
import { buildHttpServer, type HttpServer } from './adapters/http/httpServer';
import { mcpRoutes } from './adapters/mcp/mcpRoutes';
import { messageStoryRoutes } from './adapters/http/routes/messageStoryRoutes';
import { loadStoryWithRetirements } from './audit/auditReads';
import { eventStoreSource } from './audit/logSource';
import type { MailboxServices } from './application/mailboxServices';
import { checkConfig, checkPortFree, translateStartupError } from './startupChecks';
import { waitForBackends } from './startupBackends';
import { freshStartOf, type FreshStart } from './compositionRoot';
import { isMailboxError } from './errors';
import { StartupError } from './startupError';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export interface RunningServer {
  url: string;
  mailbox: Mailbox;
  http: HttpServer;
  close(): Promise<void>;
  /** Closes a start refused after it listened (the heartbeat's): what a first start created is removed (sqliteFreshStart.ts). */
  closeRefused(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  /** Where the generated admin token is shown (once). */
  print?: (text: string) => void;
  /** Aborted when the process is asked to stop during start-up: start-up ends at its next step (StartupInterrupted). */
  interrupted?: AbortSignal;
}

/**
 * The HTTP API with MCP mounted on it (POST /mcp): the two adapters meet only here; and the audit tools'
 * message story served to the console (GET /v1/audit/messages/{id}).
 */
export const buildApiServer = (mailbox: MailboxServices, logger: Logger): HttpServer =>
  buildHttpServer(mailbox, logger, [
    mcpRoutes({ logger, maxBodyBytes: mailbox.config.maxBodyBytes, requestTimeoutMs: mailbox.config.requestTimeoutMs }),
    messageStoryRoutes((messageId) => loadStoryWithRetirements(eventStoreSource(mailbox.eventStore), messageId)),
  ]);

export async function startServer(config: MailboxConfig, options: StartOptions): Promise<RunningServer> {
  const fresh = freshStartOf(config); // a refused first start leaves the data dir as it found it
  try {
    return await start(config, options, fresh);
  } catch (error) {
    await fresh.undo();
    throw translateStartupError(storeRefusal(error), config);
  }
}

/**
 * A store that stopped serving the start once it had begun (a Redis that takes no more clients, maxclients reached,
 * refuses a later connection of the start) is a refusal as the first connection's is: its one line (it names the
 * variable to fix), exit code 2. It was a stack trace, exit code 1.
 */
function storeRefusal(error: unknown): unknown {
  if (!isMailboxError(error) || error.envelope.code !== 'UNAVAILABLE') return error;
  const variable = error.envelope.field;
  if (typeof variable !== 'string' || !variable.startsWith('MAILBOX_')) return error;
  return new StartupError(
    error.envelope.message,
    { variable },
    { cause: error, refusal: { error: error.envelope.error, code: 'UNAVAILABLE' } },
  );
}

async function start(
  config: MailboxConfig,
  { logger, print = (text) => process.stdout.write(text), interrupted }: StartOptions,
  fresh: FreshStart,
): Promise<RunningServer> {
  checkConfig(config);
  await checkPortFree(config);
  await waitForBackends(config, logger, interrupted);
  const prepared = prepareAdminToken(config, logger); // a generated one is stored and shown once the stores opened
  let mailbox = await openMailbox({ ...config, adminToken: prepared.token }, { logger }, { interrupted, fresh });
  let admin: AdminToken;
  try {
    admin = keepAdminToken(prepared, logger, print);
  } catch (error) {
    await mailbox.close();
    throw error;
  }
  if (admin.source === 'generated' && admin.file) fresh.wroteToken(admin.file, admin.token);
  if (admin.token !== prepared.token) {
    // Another process stored its generated token first (views in memory: no owner lock kept it out): serve that one.
    await mailbox.close();
    mailbox = await openMailbox({ ...config, adminToken: admin.token }, { logger }, { interrupted });
  }
  logger.info({ source: admin.source, ...(admin.file ? { file: admin.file } : {}) }, 'admin token');
  let http: HttpServer;
  let url: string;
  try {
    http = buildApiServer(mailbox, logger);
    url = await http.listen(config.host, config.port);
  } catch (error) {
    await mailbox.close();
    throw error;
  }
  if (!LOOPBACK.has(config.host)) {
    logger.warn(
      { host: config.host },
      'listening beyond loopback: bearer tokens travel in clear text unless TLS terminates in front',
    );
  }
  if (config.rateLimitPerSecond === 0) {
    logger.warn(
      { variable: 'MAILBOX_RATE_LIMIT_PER_SECOND' },
      'per-agent rate limit off (MAILBOX_RATE_LIMIT_PER_SECOND=0): no agent is ever answered 429 RATE_LIMITED',
    );
  }
  if (config.refusedTokensPerSecond === 0) {
    logger.warn(
      { variable: 'MAILBOX_REFUSED_TOKENS_PER_SECOND' },
      'refused-token limit off (MAILBOX_REFUSED_TOKENS_PER_SECOND=0): every unknown bearer token is looked up in the agent registry',
    );
  }
  const head = await mailbox.eventStore.headPosition();
  logger.info(
    {
      url,
      logHead: head?.toString() ?? null,
      checkpoint: mailbox.runner.getStatus().checkpoint,
      strictRecipients: config.strictRecipients,
    },
    `mailbox listening on ${url} (API docs at ${url}/docs)`,
  );
  return {
    url,
    mailbox,
    http,
    async close() {
      await http.close();
      await mailbox.close();
    },
    async closeRefused() {
      await http.close();
      await mailbox.close();
      await fresh.undo();
    },
  };
}
