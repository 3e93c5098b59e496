/** `mailbox serve`: runs the HTTP server with the configuration from MAILBOX_* (flags override). */
import type { Command } from 'commander';
import pino from 'pino';
import { configFromEnv, parseConfig } from '../../config';

const SHUTDOWN_TIMEOUT_MS = 10_000;

export function registerServeCommand(program: Command): void {
  program.command('serve')
    .description('run the mailbox HTTP server (configured by MAILBOX_* environment variables; see README)')
    .option('--host <host>', 'address to bind (MAILBOX_HOST, default 127.0.0.1)')
    .option('--port <port>', 'port, 0 for any free one (MAILBOX_PORT, default 7420)')
    .option('--data-dir <dir>', 'SQLite log and admin token directory (MAILBOX_DATA_DIR, default ./data)')
    .action(async (options: { host?: string; port?: string; dataDir?: string }) => {
      const fromEnv = configFromEnv();
      const config = parseConfig({ ...fromEnv,
        ...(options.host ? { host: options.host } : {}),
        ...(options.port ? { port: Number(options.port) } : {}),
        ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
      const logger = pino({ level: config.logLevel, name: 'mailbox' });
      const { startServer } = await import('../../server'); // loaded here: client commands need none of it
      const server = await startServer(config, { logger });

      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          logger.warn({ signal }, 'second signal: exiting without waiting');
          process.exit(1);
        }
        stopping = true;
        logger.info({ signal }, 'shutting down: closing wake streams, finishing requests in flight');
        setTimeout(() => {
          logger.error(`shutdown took longer than ${SHUTDOWN_TIMEOUT_MS} ms; exiting`);
          process.exit(1);
        }, SHUTDOWN_TIMEOUT_MS).unref();
        server.close().then(() => {
          logger.info('stopped');
          process.exit(0);
        }, (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        });
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });
}
