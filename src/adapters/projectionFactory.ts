/** Chooses projections and wake bus from configuration: in memory unless MAILBOX_REDIS_URL is set. */
import type { Logger } from 'pino';
import type { MailboxConfig } from '../config';
import { MailboxError } from '../errors';
import type { ProjectionStore } from '../projections/projectionStore';
import type { WakeBus } from '../projections/wakeBus';
import { MemoryProjectionStore } from './projections/memoryProjectionStore';
import { InProcessWakeBus } from './wake/inProcessWakeBus';

export async function createProjectionAdapters(config: MailboxConfig, logger: Logger): Promise<{ projectionStore: ProjectionStore; wakeBus: WakeBus }> {
  if (config.redisUrl === undefined) {
    logger.info('projections: in memory, rebuilt from the log at start; wake bus: in process');
    const wakeBus = new InProcessWakeBus();
    return { wakeBus, projectionStore: new MemoryProjectionStore(wakeBus) };
  }
  throw new MailboxError('VALIDATION_FAILED', 'Invalid configuration',
    `MAILBOX_REDIS_URL '${config.redisUrl}' is not supported yet by this build.`, { field: 'MAILBOX_REDIS_URL' });
}
