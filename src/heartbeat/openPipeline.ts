/**
 * Opens the configured stores for a separate process (`mailbox heartbeat`,
 * `mailbox audit`) through the composition root. A projector runs here only
 * when asked, or (auto) when the views live in this process's memory: with
 * Redis the server's projector owns them, and a second one would hide its stall.
 */
import type { Logger } from 'pino';
import { buildContainer } from '../compositionRoot';
import type { MailboxConfig } from '../config';
import type { EventStore } from '../events/eventStore';
import type { ProjectionRunner } from '../projections/projectionRunner';
import type { ProjectionStore } from '../projections/projectionStore';
import type { WakeBus } from '../projections/wakeBus';
import { TOKENS } from '../tokens';
import type { HeartbeatSources } from './heartbeatDaemon';

export type ProjectorMode = 'auto' | 'on' | 'off';

export interface OpenedPipeline extends HeartbeatSources {
  /** True when this process runs its own projector (embedded default: in-memory views rebuilt from the log). */
  runsProjector: boolean;
  close(): Promise<void>;
}

export const viewsAreInMemory = (config: MailboxConfig): boolean => config.redisUrl === undefined;

export async function openPipeline(config: MailboxConfig, logger: Logger, projector: ProjectorMode): Promise<OpenedPipeline> {
  const container = await buildContainer(config, { logger });
  const eventStore = container.resolve<EventStore>(TOKENS.EventStore);
  const projections = container.resolve<ProjectionStore>(TOKENS.ProjectionStore);
  const wakeBus = container.resolve<WakeBus>(TOKENS.WakeBus);
  const runsProjector = projector === 'on' || (projector === 'auto' && viewsAreInMemory(config));
  const runner = runsProjector ? container.resolve<ProjectionRunner>(TOKENS.ProjectionRunner) : null;
  await runner?.start();
  return {
    eventStore, projections, wakeBus, runsProjector,
    close: async () => {
      await runner?.stop();
      await wakeBus.close();
      await projections.close();
      await eventStore.close();
    },
  };
}
